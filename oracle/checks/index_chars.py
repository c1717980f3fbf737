"""Which characters survive in the MEMORY.md text Claude Code loads, code point by code point.

Newer releases clean the loaded index: they drop control, format, private-use and unassigned
characters and turn CR, U+2028 and U+2029 into LF (2.1.88 keeps everything). Each case puts a
block of code points between two markers in the middle of an index (no trimming involved)
and compares what Claude Code sent with what the workbench says loads. The blocks cover the
whole BMP and plane 1, every character of the tag and variation-selector blocks, and samples
of the other planes; a block stays under the 25,000-unit limit so nothing is cut.

What survived is recorded as ranges (`kept`, `removed`, `lf`) per case, so a regular test can
rebuild the input and check the workbench against every code point without a download.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from oracle import runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, tail
from oracle.checks.memory_md import lines, memory_dir_rel, observe
from oracle.releases import Release

HEAD = "\n".join(lines(2)) + "\nX"
END = "Y\n" + lines(3)[2]
SEP = "|"
UNITS = 24_000
"""Most UTF-16 units of candidates per run (the index's length limit is 25,000)."""
CONVERTING = frozenset("\r\u2028\u2029")
"""Characters some releases turn into something else: tested with separators, apart."""


def _units(cp: int) -> int:
    return 2 if cp > 0xFFFF else 1


def _usable(cp: int) -> bool:
    return not 0xD800 <= cp <= 0xDFFF and chr(cp) not in "\n|XY"


def _chunks(points: Iterable[int]) -> list[list[int]]:
    out: list[list[int]] = [[]]
    size = 0
    for cp in points:
        if not _usable(cp) or chr(cp) in CONVERTING:
            continue
        if size + _units(cp) > UNITS:
            out.append([])
            size = 0
        out[-1].append(cp)
        size += _units(cp)
    return [c for c in out if c]


def _specials() -> list[int]:
    """Every control, format and separator character of the BMP, and the few that convert."""
    return [
        cp
        for cp in range(0x10000)
        if _usable(cp) and unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zs", "Zl", "Zp")
    ]


def blocks() -> dict[str, tuple[str, list[int], bool]]:
    """name → (what it covers, the code points, whether they are separated by `|`)."""
    found: dict[str, tuple[str, list[int], bool]] = {
        "specials": (
            "every BMP control, format and separator character, one by one",
            _specials(),
            True,
        )
    }
    groups = [
        ("bmp", "the BMP", range(0x10000)),
        ("plane1", "plane 1", range(0x10000, 0x20000)),
        ("planes2-3", "planes 2 and 3, every 16th", range(0x20000, 0x40000, 16)),
        ("planes4-13", "planes 4 to 13, every 256th", range(0x40000, 0xE0000, 256)),
        (
            "plane14",
            "plane 14: tags and variation selectors whole, the rest every 64th",
            [*range(0xE0000, 0xE1000), *range(0xE1000, 0xF0000, 64)],
        ),
        (
            "planes15-16",
            "private-use planes, every 256th and their last two",
            [*range(0xF0000, 0x110000, 256), 0xFFFFE, 0xFFFFF, 0x10FFFE, 0x10FFFF],
        ),
    ]
    for name, title, points in groups:
        chunks = _chunks(points)
        for i, chunk in enumerate(chunks, 1):
            label = f"{name}-{i}" if len(chunks) > 1 else name
            part = f" (part {i} of {len(chunks)})" if len(chunks) > 1 else ""
            found[label] = (f"{title}{part}", chunk, False)
    return found


def content(points: list[int], separated: bool) -> str:
    chars = [chr(cp) for cp in points]
    body = SEP + SEP.join(chars) + SEP if separated else "".join(chars)
    return f"{HEAD}{body}{END}"


def read_back(loaded: str, points: list[int], separated: bool) -> list[str] | None:
    """What became of each code point: `kept`, `removed` or `lf`; None if it cannot be told."""
    start, end = loaded.find("X"), loaded.rfind("Y\n")
    if start < 0 or end < start:
        return None
    piece = loaded[start + 1 : end]
    if separated:
        parts = piece.split(SEP)[1:-1]
        if len(parts) != len(points):
            return None
        out = []
        for cp, got in zip(points, parts, strict=True):
            out.append(
                "kept"
                if got == chr(cp)
                else "removed"
                if got == ""
                else "lf"
                if got == "\n"
                else "?"
            )
        return None if "?" in out else out
    # Order is kept and nothing converts here: what is left is a subsequence of the input.
    left = set(piece)
    wanted = {chr(cp) for cp in points}
    if not left <= wanted:
        return None
    return ["kept" if chr(cp) in left else "removed" for cp in points]


def ranges(points: list[int], fates: list[str]) -> list[list[Any]]:
    """[[first, last, fate], ...] over consecutive runs of the same fate."""
    out: list[list[Any]] = []
    for cp, fate in zip(points, fates, strict=True):
        if out and out[-1][2] == fate and out[-1][1] < cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp, fate])
    return out


def expand(points: list[int], spans: list[list[Any]]) -> list[str]:
    """The fate of each of `points`, from recorded ranges."""
    out = []
    index = 0
    for cp in points:
        while index < len(spans) and spans[index][1] < cp:
            index += 1
        out.append(spans[index][2] if index < len(spans) and spans[index][0] <= cp else "?")
    return out


def expected_text(points: list[int], fates: list[str], separated: bool) -> str:
    """The loaded piece those fates make of the block."""
    pieces = [
        chr(cp) if fate == "kept" else "\n" if fate == "lf" else ""
        for cp, fate in zip(points, fates, strict=True)
    ]
    body = SEP + SEP.join(pieces) + SEP if separated else "".join(pieces)
    return body


def _cases() -> list[Case]:
    return [
        Case(name, title, {"points": points, "separated": sep}, rule="index-cleaning")
        for name, (title, points, sep) in blocks().items()
    ]


def _summary(points: list[int], fates: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for fate in fates:
        counts[fate] = counts.get(fate, 0) + 1
    return counts


def run_case(release: Release, case: Case) -> Outcome:
    points, separated = case.data["points"], case.data["separated"]
    text = content(points, separated)
    out = Outcome("index-chars", case.name, release.version, AGREE, rule=case.rule)
    out.inputs = {"block": case.name, "title": case.title, "code_points": len(points)}
    scenario = runner.Scenario(prompt="hello", project="project")
    with runner.sandbox(scenario) as (box, ready):
        mem = box.config / memory_dir_rel(str(box.project))
        mem.mkdir(parents=True)
        with open(mem / "MEMORY.md", "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        run = runner.run_claude(release, ready, box)
        seen = observe(run)
        wb = runner.workbench(box, ["index"], env=run.env(), claude_version=release.version)
        report = wb.json() if wb.returncode in (0, 1) and wb.stdout.strip() else None
    out.seconds = run.seconds
    if run.first_main is None or not seen.get("block"):
        out.verdict, out.reason = ERROR, f"Claude Code sent no MEMORY.md block: {tail(run.stderr)}"
        return out
    if report is None:
        out.verdict, out.reason = ERROR, f"workbench index failed: {tail(wb.stderr)}"
        return out
    cc = read_back(seen["sent"], points, separated)
    ours = read_back(report.get("loaded_content") or "", points, separated)
    if cc is None:
        out.verdict, out.reason = (
            ERROR,
            "could not read Claude Code's text back code point by code point",
        )
        return out
    out.observed = {"ranges": ranges(points, cc), "counts": _summary(points, cc)}
    out.workbench = {"counts": _summary(points, ours) if ours else None}
    if ours != cc:
        wrong = [
            f"U+{cp:04X} ({c} by Claude Code, {o} by the workbench)"
            for cp, c, o in zip(points, cc, ours or ["?"] * len(points), strict=True)
            if c != o
        ]
        out.verdict = DIFFER
        out.reason = f"{len(wrong):,} code points differ, e.g. " + "; ".join(wrong[:4])
    return out


CHECK = Check(
    "index-chars", "characters kept in the loaded MEMORY.md text", _cases, run_case, weight=2.0
)
