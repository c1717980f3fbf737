"""What the Recall pane shows, as pure functions of the engine's `RecallResult`.

No I/O and no widgets: the pane (`recall.py`) and its widgets (`recall_widgets.py`) feed these
and lay the results out.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets.option_list import Option

from workbench.ui.formatting import TYPE_BADGES, plural
from workbench.ui.widgets.split_bar import BarMark, BarPart

if TYPE_CHECKING:
    from workbench.engine.recall.models import NearMiss, RecallResult, SelectedMemory
    from workbench.engine.recall.surfacing import SurfacedMemory, SurfacingView


# --- pure helpers: result → display -------------------------------------------------------


SCORE_BAR_WIDTH = 8
ENGINE_LABELS: dict[str, str] = {
    "auto": "auto (the model when a key is set)",
    "llm": "llm (ask the model)",
    "offline": "offline (local ranker)",
}
"""How the engine choice is named when it changes (a toast)."""


def engine_ran(result: RecallResult) -> str:
    """`the model (claude-sonnet-4-6)` or `the offline ranker`."""
    if result.engine == "llm":
        model = result.request.get("model") if result.request else None
        return f"the model ({model})" if model else "the model"
    return "the offline ranker"


def engine_reason(result: RecallResult) -> str:
    """Why that engine ran."""
    if result.engine == "llm":
        if result.requested_engine == "auto":
            return "auto, and ANTHROPIC_API_KEY is set"
        return "chosen in the options"
    if result.error is not None:
        message = result.error.get("message") or result.error.get("kind") or "unknown error"
        return f"auto fell back after an API error: {message}"
    if result.requested_engine == "auto":
        return "auto, and no API key is set"
    return "chosen in the options"


def engine_label(result: RecallResult) -> str:
    """For the status line, short: which engine ran and why."""
    auto = result.requested_engine == "auto"
    if result.engine == "llm":
        model = result.request.get("model") if result.request else None
        return f"recall: model {model or ''}".rstrip() + (" (auto, key set)" if auto else "")
    if result.error is not None:
        return "recall: offline ranker (API error, fell back)"
    return "recall: offline ranker" + (" (auto, no API key)" if auto else "")


def extra_notes(result: RecallResult) -> tuple[str, ...]:
    """The engine's notes minus the one the banner already states (auto falling to offline)."""
    notes = result.notes
    if result.engine == "offline" and result.requested_engine == "auto" and notes:
        return notes[1:]
    return notes


def banner_content(result: RecallResult, *, stale: bool = False) -> Content:
    """Which engine ran and why, what it found, and any notes."""
    fallback = result.error is not None
    lines = [
        Content.assemble(
            ("● ", "$text-warning" if fallback else "$text-success"),
            ("Ran: ", "$foreground-muted"),
            (engine_ran(result), "bold"),
            ("  ·  ", "$foreground-muted"),
            (engine_reason(result), "$text-warning" if fallback else "$foreground-muted"),
        ),
        Content.assemble(
            ("  ", ""),
            (f"{len(result.selected)}", "bold"),
            f" selected of {plural(len(result.candidates), 'candidate')}",
            (
                f"  ·  {plural(len(result.surfaced), 'file')} already surfaced (not offered)"
                if result.surfaced
                else ""
            ),
            (f"  ·  recent tools: {', '.join(result.recent_tools)}" if result.recent_tools else ""),
        ),
    ]
    for note in extra_notes(result):
        lines.append(
            Content.assemble(("  note: ", "$foreground-muted"), (note, "$foreground-muted italic"))
        )
    if stale:
        lines.append(
            Content.assemble(
                ("  options changed since this ran: ", "$text-warning"),
                ("F5", "bold $text-accent"),
                (" runs it again", "$text-warning"),
            )
        )
    return Content("\n").join(lines)


def text_bar(fraction: float, width: int = SCORE_BAR_WIDTH, style: str = "$primary") -> Content:
    """A small inline bar for a score relative to the best."""
    filled = max(1, round(max(0.0, min(1.0, fraction)) * width)) if fraction > 0 else 0
    return Content.assemble(("━" * filled, style), ("─" * (width - filled), "$foreground 20%"))


def type_badge(memory_type: str | None) -> Content:
    """The tree's coloured one-letter type badge."""
    key = memory_type or "untyped"
    letter = TYPE_BADGES.get(memory_type, TYPE_BADGES[None])
    return Content.styled(f" {letter} ", f"bold $memory-{key} reverse")


def hanging(text: str, width: int, mark: str, style: str = "", mark_style: str = "") -> Content:
    """`mark` then `text` wrapped to `width`, continuation lines indented under the text
    (an option list wraps at its left edge, which would lose the indent)."""
    room = max(20, width - len(mark))
    lines = textwrap.wrap(text, room, break_long_words=True, break_on_hyphens=False) or [""]
    pad = " " * len(mark)
    return Content("\n").join(
        Content.assemble((mark if i == 0 else pad, mark_style), (line, style))
        for i, line in enumerate(lines)
    )


def freshness_line(note: str) -> str:
    """The note's first sentence; the whole caution is in the Injected tab, verbatim."""
    first, dot, _rest = note.partition(". ")
    return f"freshness note: {first}{dot.strip()} The agent is told to verify it first."


def selected_prompt(number: int, item: SelectedMemory, top_score: float, width: int) -> Content:
    """One pick: path, score, type, age, description, reasons and the freshness note."""
    score: Content | str = ""
    if item.score is not None:
        score = Content.assemble(
            ("  ", ""),
            (f"{item.score:.2f} ", "bold"),
            text_bar(item.score / top_score if top_score else 0.0),
        )
    lines = [
        Content.assemble(
            (f"{number}. ", "bold $text-success"),
            type_badge(item.type),
            " ",
            (item.path, "bold"),
            score,
        )
    ]
    age_style = "$text-warning" if item.freshness_note else "$foreground-muted"
    facts = Content.assemble(
        ("   ", ""),
        (item.type or "no type", "$foreground-muted"),
        ("  ·  saved ", "$foreground-muted"),
        (item.age, age_style),
    )
    lines.append(facts)
    if item.description:
        lines.append(hanging(item.description, width, "   ", "italic $foreground-muted"))
    for reason in item.reasons:
        lines.append(hanging(reason, width, "   · ", "", "$text-success"))
    if item.freshness_note:
        lines.append(
            hanging(
                freshness_line(item.freshness_note),
                width,
                "   ⚠ ",
                "$text-warning",
                "$text-warning",
            )
        )
    return Content("\n").join(lines)


def miss_prompt(miss: NearMiss, width: int) -> Content:
    """A near miss and what kept it out."""
    score = "" if miss.score is None else f"  score {miss.score:.2f}"
    tag = "" if miss.candidate else "  (not a candidate)"
    return Content.assemble(
        ("✗ ", "$text-error"),
        (miss.path, "bold"),
        (score + tag, "$foreground-muted"),
        "\n",
        hanging(miss.why_not, width, "   ", "$foreground-muted"),
    )


def budget_content(view: SurfacingView) -> Content:
    """Would anything be injected this turn, and against which limits."""
    count = len(view.memories)
    if view.skipped_reason:
        verdict = Content.assemble(
            ("✖ Recall would not run for this prompt: ", "bold $text-error"),
            (view.skipped_reason, "$text-error"),
        )
    elif not count:
        verdict = Content.styled("Nothing would be injected: no memory was selected.", "bold")
    else:
        verdict = Content.assemble(
            ("Would inject ", "bold"),
            (plural(count, "memory", "memories"), "bold $text-success"),
            f" (at most {view.max_per_turn} per turn) · ",
            (f"{view.turn_bytes:,}", "bold"),
            " characters",
        )
    rule = Content.styled(
        f"Each file is read up to {view.max_lines} lines or {view.max_bytes:,} bytes (whole "
        "lines); a longer one is cut with a notice pointing at the full file. Once "
        f"{view.session_budget // 1024} KB of memories have been surfaced in a session, recall "
        "stops until a compaction.",
        "$foreground-muted",
    )
    return Content("\n").join([verdict, rule])


def budget_value(view: SurfacingView) -> Content:
    """The session budget before and after this turn."""
    return Content.assemble(
        (f"{view.session_bytes_after:,}", "bold"),
        (f" / {view.session_budget:,}", "$foreground-muted"),
    )


def memory_title(memory: SurfacedMemory) -> Content:
    """The line above one injected memory: its path, size and whether it was cut."""
    if memory.truncated:
        cut = Content.styled(
            f"cut after {memory.kept_lines} of {memory.total_lines} lines "
            f"({memory.truncated} limit)",
            "bold $text-warning",
        )
    else:
        whole = "its one line" if memory.total_lines == 1 else f"all {memory.total_lines} lines"
        cut = Content.styled(whole, "$foreground-muted")
    return Content.assemble(
        (memory.path, "bold"), (f"  {memory.length:,} characters · ", "$foreground-muted"), cut
    )


def reminder_content(memory: SurfacedMemory, shown_path: Callable[[str], str]) -> Content:
    """The system reminder the agent would see, exactly (paths shown via `shown_path`), with
    the header and any truncation notice marked."""
    header = memory.header.replace(memory.abs_path, shown_path(memory.abs_path))
    content = memory.content.replace(memory.abs_path, shown_path(memory.abs_path))
    body, notice = content, ""
    if memory.truncated and "\n\n> " in content:
        body, _, rest = content.rpartition("\n\n> ")
        notice = "> " + rest
    return Content.assemble(
        ("<system-reminder>\n", "$foreground-muted"),
        (header, "$text-secondary"),
        "\n\n",
        body,
        ("\n\n" + notice if notice else "", "bold $text-warning"),
        ("\n</system-reminder>", "$foreground-muted"),
    )


def manifest_content(count: int, manifest: str, surfaced: tuple[str, ...] = ()) -> Content:
    """The candidate list the selector sees."""
    head = Content.assemble(
        (plural(count, "candidate"), "bold"),
        (" offered to the selector, newest first (at most 200)", "$foreground-muted"),
    )
    lines = [head]
    if surfaced:
        lines.append(
            Content.styled(
                "left out, already surfaced this session: " + ", ".join(surfaced),
                "$foreground-muted",
            )
        )
    lines.append(Content(manifest.rstrip("\n") if manifest else "(no memory files)"))
    return Content("\n").join(lines)


def request_content(result: RecallResult) -> Content:
    """The exact request the model was sent and what it answered (model path only)."""
    if result.request is None:
        return Content.styled(
            "No request: the offline ranker ran locally and sent nothing.", "$foreground-muted"
        )
    parts = [
        Content.styled("Request sent to the model", "bold"),
        Content(json.dumps(result.request, indent=2, ensure_ascii=False)),
    ]
    if result.model_answer is not None:
        parts += [Content.styled("The model answered", "bold"), Content(result.model_answer)]
    if result.rejected_names:
        parts.append(
            Content.styled(
                "dropped (not candidates): " + ", ".join(result.rejected_names), "$text-warning"
            )
        )
    return Content("\n").join(parts)


def result_options(result: RecallResult, width: int) -> tuple[list[Option | None], dict[str, str]]:
    """The results list's options (picks, then near misses; None draws a separator), wrapped
    to `width`, and the memory path behind each option id."""
    paths: dict[str, str] = {}
    prompts: list[Option | None] = []
    top = max((s.score or 0.0 for s in result.selected), default=0.0)
    cutoff = f" · cut-off score {result.cutoff:.2f}" if result.cutoff else ""
    prompts.append(
        Option(
            Content.assemble(
                (f"Selected ({len(result.selected)})", "bold $text-success"),
                (f" by {engine_ran(result)}{cutoff}", "$foreground-muted"),
            ),
            disabled=True,
        )
    )
    if not result.selected:
        prompts.append(
            Option(
                Content.styled("   nothing selected for this prompt", "$foreground-muted"),
                disabled=True,
            )
        )
    for number, item in enumerate(result.selected, 1):
        option_id = f"selected-{number}"
        paths[option_id] = item.path
        prompts.append(Option(selected_prompt(number, item, top, width), id=option_id))
    if result.near_misses:
        prompts.append(None)
        prompts.append(
            Option(
                Content.assemble(
                    (f"Near misses ({len(result.near_misses)})", "bold $text-error"),
                    (" and what kept them out", "$foreground-muted"),
                ),
                disabled=True,
            )
        )
        for number, miss in enumerate(result.near_misses, 1):
            option_id = f"miss-{number}"
            paths[option_id] = miss.path
            prompts.append(Option(miss_prompt(miss, width), id=option_id))
    return prompts, paths


def budget_bar(view: SurfacingView) -> tuple[list[BarPart], list[BarMark]]:
    """The session budget bar: what earlier turns surfaced, what this one would add, and the
    budget's mark (the bar's scale is the budget)."""
    parts = [
        BarPart(view.session_bytes_before, "$secondary"),
        BarPart(view.turn_bytes if view.would_inject else 0, "$primary"),
    ]
    return parts, [BarMark(view.session_budget, "$error")]


# --- the banner and the notes in place of a result -----------------------------------------

IDLE_BANNER = Content.assemble(
    ("Type a prompt and press Enter ", "bold"),
    ("(", "$foreground-muted"),
    ("i", "bold $text-accent"),
    (" puts the cursor in the box). ", "$foreground-muted"),
    (
        "Recall picks at most 5 memories per turn from the manifest; the engine "
        "is the model when a key is set, else the offline ranker. ",
        "$foreground-muted",
    ),
    ("ctrl+o", "bold $text-accent"),
    (" cycles it.", "$foreground-muted"),
)
"""The banner before the first run."""
NOTHING_INJECTED_YET = Content.styled(
    "Nothing injected yet: run a query first.", "$foreground-muted"
)
NOTHING_INJECTED = Content.styled("Nothing injected: recall did not run.", "$foreground-muted")
CANCELLED_BANNER = Content.styled("Recall cancelled · f5 runs it again", "bold $text-warning")
EMPTY_QUERY_BANNER = Content.assemble(
    ("Nothing to recall for: the query is empty. ", "bold $text-warning"),
    ("Type a prompt in the box (the cursor is there), then Enter.", ""),
)


def running_banner(engine: str, step: str) -> Content:
    """The banner while a run is going: the engine and what it is doing."""
    doing = f": {step}" if step else ""
    return Content.styled(f"Running recall ({engine}){doing}… · esc cancels", "bold $text-warning")


def failed_banner(engine: str, error: str) -> Content:
    """The banner after a run that could not go ahead, with how to get one that can."""
    return Content.assemble(
        ("✖ Recall did not run", "bold $text-error"),
        (f" ({engine}): ", "$foreground-muted"),
        (error, "$text-error"),
        "\n",
        ("  ctrl+o", "bold $text-accent"),
        (" switches the engine (auto or offline work without a key).", "$foreground-muted"),
    )
