"""A finished `ls --json` output that stays right as the days pass.

Between runs the store keeps the compact JSON of a listing (see `ListingCache`). All of it
depends only on the files and the indexes, except two things that depend on today: each
file's `age_days`, and its `memory-stale` finding (present past 30 days, and naming the age).
So the output is kept with, for each file, where those two spans sit and the file's mtime: a
later run computes every age afresh and rewrites only the spans of files whose age changed,
which is a few files a minute in a large folder, and all of them a day later.

A row is written from pieces (`encode_row`) so that the spans are known without searching,
and the pieces joined are exactly `compact_json(row)`: the tests hold the two equal.
"""

from __future__ import annotations

import bisect
import json
import math
import os
from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

from workbench.engine.memories.listing_cache import (
    FINISHED_FIELDS,
    ListingCache,
    compact_json,
    stamp_of,
)
from workbench.engine.memories.staleness import DAY_MS, STALE_AFTER_DAYS, stale_message
from workbench.engine.memories.walk import iter_memory_paths

FIELDS = FINISHED_FIELDS
"""Per row in the table: age, ages (0/1), the path's JSON span (2), the age digits' span (2),
the stale slot's span (2). The slot also holds the commas the stale finding needs."""


class Listed:
    """One row of a listing with what decides its date-dependent spans."""

    __slots__ = ("row", "mtime_ms", "before_stale", "ages")

    def __init__(self, row: dict[str, Any], mtime_ms: float, before_stale: int, ages: bool):
        self.row = row
        self.mtime_ms = mtime_ms
        self.before_stale = before_stale
        """How many of the row's findings come before where `memory-stale` goes."""
        self.ages = ages
        """Whether `memory-stale` applies to the file at all."""


def stale_json(path_json: bytes, age: int) -> bytes:
    """The `memory-stale` finding of a file whose path is `path_json`, as compact JSON."""
    message = json.dumps(stale_message(age), ensure_ascii=False).encode("utf-8")
    return (
        b'{"path":'
        + path_json
        + b',"rule":"memory-stale","severity":"info","message":'
        + message
        + b',"line":null}'
    )


def _slot(path_json: bytes, age: int, ages: bool, pre: bool, post: bool) -> bytes:
    """What sits between the findings before `memory-stale` and those after it."""
    if ages and age > STALE_AFTER_DAYS:
        return (b"," if pre else b"") + stale_json(path_json, age) + (b"," if post else b"")
    return b"," if pre and post else b""


class Finished(NamedTuple):
    """A listing's output with what `patch` needs to bring it to another day."""

    output: bytes
    table: array[int]
    """`FIELDS` integers a row (see `FIELDS`)."""
    mtimes: array[float]
    bounds: array[float]
    """When each row's age next moves on after `now_ms`, ascending (1 ms early)."""
    order: array[int]
    """The row each of `bounds` belongs to."""
    now_ms: float
    """The moment the ages in `output` are for."""


def encode(items: Sequence[Listed], now_ms: float) -> Finished:
    """The listing's compact JSON at `now_ms`, with its table, mtimes and age bounds."""
    table: array[int] = array("q")
    mtimes: array[float] = array("d")
    parts = [b"["]
    at = 1
    for n, item in enumerate(items):
        if n:
            parts.append(b",")
            at += 1
        row = item.row
        age = row["age_days"]
        head = dict(row)
        lints = head.pop("lints")
        tail_keys = ("size_bytes", "tokens", "indexed")
        tail = {key: head.pop(key) for key in tail_keys}
        kind = head.pop("type_format")
        del head["age_days"]
        path_json = compact_json(row["path"])
        pre = lints[: item.before_stale]
        stale = bool(item.ages and age > STALE_AFTER_DAYS)
        post = lints[item.before_stale + stale :]
        first = compact_json(head)[:-1] + b',"age_days":'
        digits = str(age).encode()
        middle = b"," + compact_json(tail)[1:-1] + b',"lints":['
        pre_json = compact_json(pre)[1:-1]
        slot = _slot(path_json, age, item.ages, bool(pre), bool(post))
        post_json = compact_json(post)[1:-1]
        last = b'],"type_format":' + compact_json(kind) + b"}"
        path_at = at + len(b'{"path":')
        age_at = at + len(first)
        slot_at = age_at + len(digits) + len(middle) + len(pre_json)
        table.extend(
            (
                age,
                int(item.ages),
                path_at,
                path_at + len(path_json),
                age_at,
                age_at + len(digits),
                slot_at,
                slot_at + len(slot),
            )
        )
        mtimes.append(item.mtime_ms)
        for piece in (first, digits, middle, pre_json, slot, post_json, last):
            parts.append(piece)
            at += len(piece)
    parts.append(b"]")
    # A row's age moves on a day after its mtime, and every day after that; 1 ms early, so
    # float rounding never leaves a changed age unseen (a row looked at early is unchanged).
    nexts = [mtime + (math.floor((now_ms - mtime) / DAY_MS) + 1) * DAY_MS - 1 for mtime in mtimes]
    order = sorted(range(len(nexts)), key=nexts.__getitem__)
    bounds = array("d", [nexts[n] for n in order])
    return Finished(b"".join(parts), table, mtimes, bounds, array("q", order), now_ms)


def patch(kept: Finished, now_ms: float) -> bytes:
    """The kept output as it reads at `now_ms`: the ages and `memory-stale` findings of the
    rows whose age may have moved on since (all rows, if the clock went back) recomputed and
    their spans rewritten."""
    output, table, mtimes = kept.output, kept.table, kept.mtimes
    if now_ms >= kept.now_ms:
        rows: Sequence[int] = sorted(kept.order[: bisect.bisect_right(kept.bounds, now_ms)])
    else:
        rows = range(len(mtimes))
    pieces: list[bytes] = []
    last = 0
    for n in rows:
        age = max(0, math.floor((now_ms - mtimes[n]) / DAY_MS))
        base = n * FIELDS
        if age == table[base]:
            continue
        ages, path_at, path_end, age_at, age_end, slot_at, slot_end = table[base + 1 : base + 8]
        path_json = output[path_at:path_end]
        # Findings sit before the slot unless the list opens there, after it unless the
        # list closes there.
        pre = output[slot_at - 1 : slot_at] != b"["
        post = output[slot_end : slot_end + 1] != b"]"
        pieces.append(output[last:age_at])
        pieces.append(str(age).encode())
        pieces.append(output[age_end:slot_at])
        pieces.append(_slot(path_json, age, bool(ages), pre, post))
        last = slot_end
    if not pieces:
        return output
    pieces.append(output[last:])
    return b"".join(pieces)


class Lookup(NamedTuple):
    """A listing's walk and its key, and the output kept under that key (None: a miss)."""

    walk: list[tuple[str, os.stat_result]]
    key: str | None
    indexes: Any
    output: bytes | None


def look_up(
    cache: ListingCache | None,
    scope: str,
    memory_dir: str,
    index_paths: tuple[str, str],
    now_ms: float,
) -> Lookup:
    """Walk the folder and answer from the kept output when its key still holds; what
    `MemoryStore.listing_json` needs to go on from a miss otherwise."""
    walk = iter_memory_paths(memory_dir)
    if cache is None:
        return Lookup(walk, None, None, None)
    try:
        indexes = tuple(_stamp_or_none(path) for path in index_paths)
    except OSError:
        return Lookup(walk, None, None, None)
    key = cache.listing_key(scope, walk, indexes)
    kept = cache.finished(scope, key)
    output = patch(kept, now_ms) if kept is not None else None
    return Lookup(walk, key, indexes, output)


def _stamp_or_none(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return None
