"""A finished `ls --json` output that stays right as the days pass.

Between runs the store keeps the compact JSON of a listing (see `ListingCache`). All of it
depends only on the files and the indexes, except two things that depend on today: each
file's `age_days`, and its `memory-stale` finding (present past 30 days, and naming the age).
So the output is kept with, for each file, where those two spans sit and the file's mtime: a
later run computes every age afresh and rewrites only the spans of files whose age changed,
which is a few files a minute in a large folder, and all of them a day later.

The spans are found in the output as written (`encode`), by the keys that open them, and
each is checked against the row's values before the output is kept.
"""

from __future__ import annotations

import bisect
import math
import os
from array import array
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from workbench.engine.memories.listing_cache import (
    FINISHED_FIELDS,
    ListingCache,
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
    # What `json.dumps(message, ensure_ascii=False)` gives, without its Python wrapper.
    message = encode_basestring(stale_message(age)).encode("utf-8")
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


def encode(items: Sequence[Listed], output: bytes, now_ms: float) -> Finished | None:
    """`output`, the compact JSON of the rows of `items` at `now_ms`, with its table, mtimes
    and age bounds; None if a row's spans are not where its values put them.

    The spans are found by the keys that open them. Inside a JSON string every `"` is
    escaped, so a comma and a quote side by side (`,"age_days":`, `,"line":`) only ever
    belong to the structure: one search each, and no row is written twice.
    """
    table: array[int] = array("q")
    mtimes: array[float] = array("d")
    at = 0  # the `[` or `,` before the next row
    for item in items:
        try:
            end = _row_spans(output, at + 1, item, table)
        except ValueError:  # a key not found
            return None
        if end is None:
            return None
        mtimes.append(item.mtime_ms)
        at = end
    if output[at:] != b"]":
        return None
    # A row's age moves on a day after its mtime, and every day after that; 1 ms early, so
    # float rounding never leaves a changed age unseen (a row looked at early is unchanged).
    nexts = [mtime + (math.floor((now_ms - mtime) / DAY_MS) + 1) * DAY_MS - 1 for mtime in mtimes]
    order = sorted(range(len(nexts)), key=nexts.__getitem__)
    bounds = array("d", [nexts[n] for n in order])
    return Finished(output, table, mtimes, bounds, array("q", order), now_ms)


def _row_spans(output: bytes, at: int, item: Listed, table: array[int]) -> int | None:
    """Add the `FIELDS` integers of the row that starts at `at` to `table`, and return where
    it ends; None if its age or its `memory-stale` slot is not as its values say."""
    if not output.startswith(b'{"path":', at):
        return None
    row = item.row
    age = row["age_days"]
    path_at = at + len(b'{"path":')
    path_end = output.index(b',"abs_path":', path_at)
    age_at = output.index(b',"age_days":', path_end) + len(b',"age_days":')
    digits = str(age).encode()
    age_end = age_at + len(digits)
    slot_at = output.index(b',"lints":[', age_end) + len(b',"lints":[')
    for _ in range(item.before_stale):
        # A finding ends with its line, a number or null, and the closing brace.
        slot_at = output.index(b"}", output.index(b',"line":', slot_at)) + 1
    stale = item.ages and age > STALE_AFTER_DAYS
    pre = item.before_stale > 0
    post = len(row["lints"]) > item.before_stale + stale
    slot = _slot(output[path_at:path_end], age, item.ages, pre, post)
    slot_end = slot_at + len(slot)
    if output[age_at:age_end] != digits or output[slot_at:slot_end] != slot:
        return None
    # The row closes after its `type_format`: null or a name, neither holding a brace.
    end = output.index(b"}", output.index(b'],"type_format":', slot_end)) + 1
    table.extend((age, int(item.ages), path_at, path_end, age_at, age_end, slot_at, slot_end))
    return end


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
