"""The MEMORY.md text Claude Code actually sent, for many index shapes, against `index`.

Each shape is an index we generate (our own words). Claude Code sends what it loaded inside
the first user message; the block is cut out of the recorded request and compared with the
workbench's `loaded_content` and whether it warns.
"""

from __future__ import annotations

import re
from typing import Any

from oracle import extract, runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, scrub, tail
from oracle.releases import Release

TOPICS = (
    "build cache",
    "release checklist",
    "flaky tests",
    "database migrations",
    "API pagination",
    "deploy keys rotation",
    "code review habits",
    "logging levels",
)


def entry(i: int, width: int = 70, *, emoji: str = "") -> str:
    """One index line of about `width` characters, unique by number."""
    topic = TOPICS[i % len(TOPICS)]
    head = f"- [{emoji}{topic.title()} {i}](topic_{i:04d}.md) — "
    hook = f"notes on {topic} number {i}, kept short"
    line = head + hook
    while len(line) < width:
        line += f" and more about {topic}"
    return line[:width].rstrip()


def lines(count: int, width: int = 70, *, emoji: str = "") -> list[str]:
    return [entry(i, width, emoji=emoji) for i in range(count)]


def _exact_length(count: int, total: int) -> str:
    """`count` lines joined by LF whose length is exactly `total` characters."""
    per, extra = divmod(total - (count - 1), count)
    rows = [entry(i, per + (1 if i < extra else 0)) for i in range(count)]
    rows = [row.ljust(per + (1 if i < extra else 0), ".") for i, row in enumerate(rows)]
    text = "\n".join(rows)
    assert len(text) == total, (len(text), total)
    return text


def shapes() -> dict[str, tuple[str, str | bytes]]:
    """name → (what it is, the MEMORY.md content)."""
    small = "\n".join(lines(3)) + "\n"
    emoji = "\U0001f9ea"  # a test tube: two UTF-16 units
    comments = (
        "---\nname: index\ndescription: the project index\n---\n"
        "<!-- maintained by hand; keep entries short -->\n"
        + "\n".join(lines(4))
        + "\n<!--\na block comment\nover lines\n-->\n"
        "```\n<!-- inside a fence: kept -->\n```\n"
        "- [Inline](inline.md) — text <!-- an inline comment --> after\n"
    )
    return {
        "small": ("three short entries", small),
        "lines-200": ("exactly 200 lines", "\n".join(lines(200)) + "\n"),
        "lines-201-blank": (
            "200 lines, then blank lines (trimmed away)",
            "\n".join(lines(200)) + "\n\n\n",
        ),
        "lines-250": ("250 short lines (line limit)", "\n".join(lines(250)) + "\n"),
        "length-30k": ("120 lines of 250 characters (length limit)", "\n".join(lines(120, 250))),
        "both-limits": ("260 lines of 150 characters (both limits)", "\n".join(lines(260, 150))),
        "crlf-small": ("five lines with CRLF endings", "\r\n".join(lines(5)) + "\r\n"),
        "crlf-at-limit": (
            "150 lines, 24,939 units with LF, 25,088 with CRLF",
            _exact_length(150, 24_939).replace("\n", "\r\n"),
        ),
        "lf-at-limit": ("the same 150 lines with LF (under the limit)", _exact_length(150, 24_939)),
        "trailing-1f": ("ends with U+001F", small + "\x1f"),
        "unicode-space": (
            "ends with NBSP, U+2028 and NEL",
            small.rstrip("\n") + "\u00a0\u2028\u0085",
        ),
        "trailing-invisible": (
            "ends with NBSP, a vertical tab, a zero-width space, NEL, a space and U+001F",
            small.rstrip("\n") + "\u00a0\x0b\u200b\u0085 \x1f",
        ),
        "leading-invisible": (
            "starts with a control, a zero-width space and spaces",
            "\x01\u200b  \n" + small,
        ),
        "lone-cr": (
            "lines ended by a lone CR in the middle",
            "\r".join(lines(3)) + "\n" + "\n".join(lines(3)) + "\n",
        ),
        "controls-at-limit": (
            "150 lines, 24,939 units without their U+0001s, 25,089 with them",
            _exact_length(150, 24_939).replace("\n", "\x01\n"),
        ),
        "line-separators": (
            "150 lines, each with a U+2028 inside (300 lines once they become LF)",
            "\n".join(line[:30] + "\u2028" + line[30:] for line in lines(150)) + "\n",
        ),
        "single-huge-line": ("one line of 30,000 characters", entry(0, 30_000)),
        "frontmatter-comments": ("frontmatter and HTML comments", comments),
        "astral": (
            "emoji: 29,000 UTF-16 units in 19,100 code points",
            "\n".join(lines(100, 190, emoji=emoji * 100)),
        ),
        "whitespace-around": (
            "blank lines and spaces around the entries",
            "\n\n  \t\n" + "\n".join(lines(3)) + "  \t \n\n",
        ),
        "bom": ("a UTF-8 byte order mark", ("\ufeff" + small).encode("utf-8")),
        "blank-only": ("only whitespace", "\n  \n\t\n"),
    }


def _cases() -> list[Case]:
    rules = {
        "crlf-small": "crlf-conversion",
        "trailing-1f": "trim-u001f",
        "unicode-space": "index-cleaning",
        "trailing-invisible": "index-cleaning",
        "leading-invisible": "index-cleaning",
        "lone-cr": "index-cleaning",
        "controls-at-limit": "index-cleaning",
        "line-separators": "index-cleaning",
        "lines-250": "truncation-warning-detail",
        "length-30k": "truncation-warning-detail",
        "single-huge-line": "truncation-warning-detail",
    }
    return [
        Case(name, title, {"content": content}, rule=rules.get(name))
        for name, (title, content) in shapes().items()
    ]


def memory_dir_rel(project_root: str) -> str:
    """The memory folder of a short ASCII project under the config home."""
    return f"projects/{re.sub(r'[^A-Za-z0-9]', '-', project_root)}/memory"


def observe(run: runner.Run) -> dict[str, Any]:
    first = run.first_main
    if first is None:
        return {"sent": None}
    blocks = [b for b in extract.memory_blocks(first) if "/memory/" in b.path]
    if not blocks:
        return {"sent": None, "block": False}
    return {"sent": blocks[0].text, "block": True}


def run_case(release: Release, case: Case) -> Outcome:
    content = case.data["content"]
    scenario = runner.Scenario(prompt="hello", project="project")
    with runner.sandbox(scenario) as (box, ready):
        mem = box.config / memory_dir_rel(str(box.project))
        mem.mkdir(parents=True)
        if isinstance(content, bytes):
            (mem / "MEMORY.md").write_bytes(content)
        else:
            with open(mem / "MEMORY.md", "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
        run = runner.run_claude(release, ready, box)
        seen = observe(run)
        wb = runner.workbench(box, ["index"], env=run.env(), claude_version=release.version)
        report = wb.json() if wb.returncode in (0, 1) and wb.stdout.strip() else None
        out = Outcome("memory-md", case.name, release.version, AGREE, rule=case.rule)
        out.inputs = {"shape": case.name, "title": case.title}
        out.seconds = run.seconds
        if run.first_main is None:
            out.verdict, out.reason = ERROR, f"Claude Code sent nothing: {tail(run.stderr)}"
            return out
        if report is None:
            out.verdict, out.reason = ERROR, f"workbench index failed: {tail(wb.stderr)}"
            return out
        out.workbench = {
            "loaded_content": report.get("loaded_content"),
            "warning": report.get("warning") is not None,
            "line_count": report.get("line_count"),
            "length": report.get("length"),
            "line_truncated": report.get("line_truncated"),
            "length_truncated": report.get("length_truncated"),
            "dropped_lines": report.get("dropped_lines"),
        }
        out.observed = describe_sent(seen.get("sent"), report)
        judge(out)
        out.observed = scrub(out.observed, str(box.root))
        return out


def describe_sent(sent: str | None, report: dict[str, Any]) -> dict[str, Any]:
    """What Claude Code sent, split into the loaded text and the warning after it."""
    if sent is None:
        return {"block": False, "loaded": None, "warning": False}
    loaded = report.get("loaded_content") or ""
    content, warning = split_block(sent, loaded)
    return {
        "block": True,
        "loaded": content,
        "loaded_units": len(content.encode("utf-16-le")) // 2,
        "loaded_lines": content.count("\n") + 1 if content else 0,
        "has_cr": "\r" in content,
        "warning": bool(warning),
        "warning_numbers": re.findall(r"\d[\d,]*(?:\.\d+)?", warning),
        "warning_units": len(warning),
        "warning_quotes_first_cut_line": _quotes_cut_line(warning, report),
    }


def split_block(sent: str, loaded_hint: str) -> tuple[str, str]:
    """The block's loaded text and its trailing warning.

    A warning is set off from the content by a blank line; when the block starts with what
    the workbench loaded, that split is taken first (it is the likeliest).
    """
    if sent.startswith(loaded_hint) and (
        sent == loaded_hint or sent[len(loaded_hint) :].startswith("\n\n")
    ):
        return loaded_hint, sent[len(loaded_hint) :].strip("\n")
    cut = sent.rfind("\n\n")
    if cut > 0 and re.search(r"\b(200|25[,.]?0{3}|\d+ ?KB)\b", sent[cut:]):
        return sent[:cut], sent[cut:].strip("\n")
    return sent, ""


def _quotes_cut_line(warning: str, report: dict[str, Any]) -> bool:
    cut = [e for e in report.get("entries") or [] if isinstance(e, dict) and not e.get("loaded")]
    if not warning or not cut:
        return False
    probe = str(cut[0].get("text", "")).strip()[:24]
    return bool(probe) and probe in warning


def judge(out: Outcome) -> None:
    seen, wb = out.observed, out.workbench
    if not seen["block"]:
        if wb["loaded_content"] or wb["warning"]:
            out.verdict = DIFFER
            out.reason = "Claude Code sent no MEMORY.md block; the workbench loads text"
        return
    problems: list[str] = []
    cc, ours = seen["loaded"], wb["loaded_content"] or ""
    if cc != ours:
        problems.append(_text_difference(cc, ours))
    if seen["warning"] != wb["warning"]:
        problems.append(
            f"Claude Code {'warns' if seen['warning'] else 'does not warn'}, "
            f"the workbench {'warns' if wb['warning'] else 'does not'}"
        )
    if problems and out.inputs.get("shape") == "crlf-at-limit":
        problems.append(
            "Claude Code counts each CR toward the 25,000-unit limit, the workbench drops them "
            "before it counts"
        )
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text)


def _text_difference(cc: str, ours: str) -> str:
    if cc.replace("\r\n", "\n") == ours.replace("\r\n", "\n"):
        if "\r" in cc:
            return "Claude Code keeps the CR of CRLF line ends in the loaded text; the workbench drops it"
        return "Claude Code converts CRLF to LF in the loaded text; the workbench keeps the CR"
    if ours.startswith(cc) and 0 < len(ours) - len(cc) <= 8:
        return f"Claude Code trims the trailing {_code_points(ours[len(cc) :])}; the workbench keeps it"
    if cc.startswith(ours) and 0 < len(cc) - len(ours) <= 8:
        return f"Claude Code keeps the trailing {_code_points(cc[len(ours) :])}; the workbench trims it"
    units = lambda s: len(s.encode("utf-16-le")) // 2  # noqa: E731
    at = next((i for i, (a, b) in enumerate(zip(cc, ours, strict=False)) if a != b), None)
    where = f"first difference at character {at}" if at is not None else "one is a prefix"
    return (
        f"loaded text differs: Claude Code {units(cc):,} units in {cc.count(chr(10)) + 1} "
        f"lines, workbench {units(ours):,} units in {ours.count(chr(10)) + 1} lines ({where})"
    )


CHECK = Check("memory-md", "the MEMORY.md text Claude Code sent", _cases, run_case, weight=2.0)
