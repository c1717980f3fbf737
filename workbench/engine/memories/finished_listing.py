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

import json
import math
from array import array
from collections.abc import Sequence
from typing import Any

from workbench.engine.memories.lint import STALE_AFTER_DAYS, stale_message
from workbench.engine.memories.listing_cache import FINISHED_FIELDS, compact_json

DAY_MS = 86_400_000
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


def age_days(now_ms: float, mtime_ms: float) -> int:
    """Whole days since `mtime_ms` (never negative), as the listing counts them."""
    return max(0, math.floor((now_ms - mtime_ms) / DAY_MS))


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


def encode(items: Sequence[Listed], now_ms: float) -> tuple[bytes, array[int], array[float]]:
    """The listing's compact JSON, its table (`FIELDS` ints a row) and the rows' mtimes."""
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
    return b"".join(parts), table, mtimes


def patch(output: bytes, table: array[int], mtimes: array[float], now_ms: float) -> bytes:
    """`output` (made by `encode`) as it reads at `now_ms`: every age and `memory-stale`
    finding recomputed, and the spans of the rows whose age changed rewritten."""
    pieces: list[bytes] = []
    last = 0
    for n, mtime_ms in enumerate(mtimes):
        age = max(0, math.floor((now_ms - mtime_ms) / DAY_MS))
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
