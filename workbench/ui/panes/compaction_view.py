"""What the Compaction pane shows, as pure functions of the engine's `CompactPreview`.

No I/O and no widgets: the pane (`compaction.py`) feeds these the preview, the compaction
history and the sessions, and lays the results out.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content

from workbench.ui.formatting import duration_words, plural
from workbench.ui.widgets.split_bar import BarMark, BarPart

if TYPE_CHECKING:
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.context.compaction.survival import SurvivalItem, SurvivalReport
    from workbench.engine.context.compaction_log import CompactionRecord
    from workbench.engine.context.session_list import SessionInfo


SUMMARISED = "$warning"
KEPT = "$success"
SUMMARY = "$secondary"
RESTORED = "$primary"
THRESHOLD = "$error"
SURVIVAL_KINDS = (
    ("paths", "Paths"),
    ("commands", "Commands"),
    ("numbers", "Numbers"),
    ("identifiers", "Identifiers"),
)
SECTIONS = ("sm", "full", "micro", "files", "survival", "history")
"""The titled sections below the bars, in order (the numbers table follows `full`)."""
MAX_HISTORY_LOST_SHOWN = 4
MAX_LOST_SHOWN = 12
MAX_OTHERS_SHOWN = 6
MAX_FILES_SHOWN = 4


def common_root(paths: Iterable[str]) -> str | None:
    """The folder the preview's absolute paths share (the session's working directory, in
    practice), so they can be shown relative to it; None when there is no useful one."""
    absolute = sorted({p for p in paths if p.startswith("/")})
    if len(absolute) < 2:
        return None
    root = os.path.commonpath(absolute)
    if root in absolute:
        root = os.path.dirname(root)
    return root if root.count("/") >= 2 else None


def short_path(path: str, root: str | None) -> str:
    """`path` relative to `root` when it lies under it."""
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


def preview_root(preview: CompactPreview) -> str | None:
    """The common folder of every path the preview mentions."""
    survival = preview.survival
    paths = [f.path for f in preview.files.files]
    paths += [path for path, _ in preview.files.skipped]
    paths += [item.value for item in survival.paths]
    return common_root(paths)


def summarised_tokens(preview: CompactPreview) -> int:
    """Tokens of the span a summary would replace on the chosen path."""
    sm = preview.session_memory
    if preview.chosen == "session_memory":
        return max(0, preview.pre_tokens - sm.kept_tokens)
    return preview.pre_tokens


def restored_tokens(preview: CompactPreview) -> int:
    """Files and skills re-attached after a full compaction."""
    return preview.files.total_tokens + sum(s.tokens for s in preview.skills if s.included)


def after_estimate(preview: CompactPreview) -> tuple[int, bool]:
    """Tokens in context right after the compaction, and whether it is an upper bound."""
    sm = preview.session_memory
    if preview.chosen == "session_memory":
        return sm.context_after_tokens, False
    return restored_tokens(preview) + preview.full.max_output_tokens, True


Section = tuple[Content, Content]
"""A section's title line and its body (the body is indented, so wrapped lines stay in)."""


@dataclass(frozen=True)
class Bar:
    """One of the before and after bars: its parts against a scale, the threshold marked."""

    parts: tuple[BarPart, ...]
    scale: float
    marks: tuple[BarMark, ...]


def bars(preview: CompactPreview) -> tuple[Bar, Bar]:
    """The context before and after the compaction, on one scale: what is summarised, kept,
    the summary and what is restored, against the auto-compact threshold."""
    sm = preview.session_memory
    scale = max(preview.pre_tokens, preview.threshold, 1) * 1.04
    marks = (BarMark(preview.threshold, THRESHOLD),)
    summarised = summarised_tokens(preview)
    before: tuple[BarPart, ...]
    after: tuple[BarPart, ...]
    if preview.chosen == "session_memory":
        before = (BarPart(summarised, SUMMARISED), BarPart(sm.kept_tokens, KEPT))
        after = (BarPart(sm.summary_tokens, SUMMARY), BarPart(sm.kept_tokens, KEPT))
    else:
        before = (BarPart(summarised, SUMMARISED),)
        after = (
            BarPart(preview.full.max_output_tokens, SUMMARY, "▒"),
            BarPart(restored_tokens(preview), RESTORED),
        )
    return Bar(before, scale, marks), Bar(after, scale, marks)


def before_value(preview: CompactPreview) -> Content:
    """The tokens in context now, beside the before bar."""
    return Content.styled(f"{preview.pre_tokens:,}", "bold")


def after_value(preview: CompactPreview) -> Content:
    """The tokens in context right after, beside the after bar (≤ when an upper bound)."""
    after, upper_bound = after_estimate(preview)
    return Content.styled(f"{'≤' if upper_bound else '≈'}{after:,}", f"bold {KEPT}")


def status_content(
    *, busy: bool, progress: str, cancelled: bool, summary_label: str | None
) -> Content:
    """The line beside the session picker: what the preview is doing, that it was cancelled,
    which summary it checks, or the key that checks one."""
    if busy:
        doing = progress or "previewing…"
        return Content.styled(f"{doing} · esc cancels", "$text-warning")
    if cancelled:
        return Content.styled("preview cancelled · f5 runs it again", "$text-warning")
    if summary_label is not None:
        return Content.assemble(("checked against ", "$foreground-muted"), (summary_label, "bold"))
    return Content.assemble(("c", "bold $text-accent"), (" check a summary", "$foreground-muted"))


def headline_content(preview: CompactPreview) -> Content:
    """Tokens before compaction against the threshold, and whether auto-compact fires."""
    if preview.would_autocompact:
        verdict = Content.styled("▲ Auto-compact would fire now", "bold $text-error")
    else:
        verdict = Content.styled("✓ Auto-compact would not fire yet", "bold $text-success")
    return Content.assemble(
        (f"{preview.pre_tokens:,}", "bold"),
        " tokens before compaction  ·  auto-compact at ",
        (f"{preview.threshold:,}", f"bold {THRESHOLD}"),
        "\n",
        verdict,
    )


def headline_detail(preview: CompactPreview) -> Content:
    """Why auto-compact would or would not fire, and what was measured."""
    return Content.styled(
        f"{preview.autocompact_reason}  ·  {plural(preview.messages, 'message')} since the "
        f"last boundary  ·  {preview.model}",
        "$foreground-muted",
    )


def legend_content(preview: CompactPreview) -> Content:
    """What the bar colours mean."""
    if preview.chosen == "full":
        items = [("summarised", SUMMARISED), ("summary (max)", SUMMARY), ("restored", RESTORED)]
    else:
        items = [("summarised", SUMMARISED), ("kept", KEPT), ("summary", SUMMARY)]
    parts = [
        Content.assemble(("■ ", style), (label, "$foreground-muted")) for label, style in items
    ]
    parts.append(Content.assemble(("┃ ", THRESHOLD), ("auto-compact", "$foreground-muted")))
    return Content("  ").join(parts)


def engine_label(preview: CompactPreview) -> str:
    """For the status line: a dry run (nothing is sent), and which path Claude Code would take."""
    path = "session-memory" if preview.chosen == "session_memory" else "full"
    return f"compaction: dry run, {path} path"


def _badge(used: bool, fallback: str) -> Content:
    if used:
        return Content.styled("● would be used", "bold $text-success")
    return Content.styled(f"○ {fallback}", "$foreground-muted")


def session_memory_section(preview: CompactPreview) -> Section:
    """Whether session-memory compaction is enabled and available, and why not."""
    sm = preview.session_memory
    chosen = preview.chosen == "session_memory"
    title = Content.assemble(
        ("Session-memory compaction", "bold"), "  ", _badge(chosen, "not used")
    )
    ok, no = ("✓ ", "$text-success"), ("✗ ", "$text-error")
    lines = [
        Content.assemble(
            ok if sm.enabled else no,
            ("enabled: " if sm.enabled else "disabled: ", "$foreground-muted"),
            sm.enabled_reason,
        )
    ]
    if sm.enabled:
        lines.append(
            Content.assemble(
                ok if sm.available else no,
                ("available: " if sm.available else "not available: ", "$foreground-muted"),
                sm.reason,
            )
        )
    for note in sm.adjustments:
        lines.append(Content.styled(f"· {note}", "$foreground-muted"))
    if sm.truncated_sections:
        names = ", ".join(s.lstrip("# ") for s in sm.truncated_sections)
        lines.append(
            Content.assemble(
                ("✂ ", "$text-warning"),
                f"{plural(len(sm.truncated_sections), 'notes section')} cut to fit: ",
                (names, "bold"),
            )
        )
    return title, Content("\n").join(lines)


def full_section(preview: CompactPreview) -> Section:
    """Full compaction: used, or the fallback."""
    chosen = preview.chosen == "full"
    title = Content.assemble(("Full compaction", "bold"), "  ", _badge(chosen, "the fallback"))
    if not chosen:
        return title, Content("")
    full = preview.full
    restored = len(preview.files.restored)
    body = Content.assemble(
        ("→ ", "$text-warning"),
        "the model summarises all ",
        (plural(full.summarized_messages, "message"), "bold"),
        " since the last boundary; ",
        (plural(restored, "file"), "bold") if restored else "no file",
        " come back as attachments" if restored > 1 else " comes back as an attachment",
    )
    if full.ptl is not None:
        body += Content.styled(
            f"\nprompt-too-long retry drops {full.ptl.dropped_groups} of {full.ptl.groups} "
            f"rounds ({full.ptl.dropped_tokens:,} tokens)",
            "$text-warning",
        )
    return title, body


def numbers_content(preview: CompactPreview) -> Content:
    """Both paths side by side: summarised, kept, restored, stripped, summary, after."""
    sm = preview.session_memory
    full = preview.full
    sm_ok = sm.keep_start_index is not None
    skills = [s for s in preview.skills if s.included]
    restored_text = plural(len(preview.files.restored), "file")
    if skills:
        restored_text += " + " + plural(len(skills), "skill")
    restored_text = (
        f"{restored_text}, {restored_tokens(preview):,}" if restored_tokens(preview) else "none"
    )
    stripped = plural(full.images_stripped, "image")
    if full.documents_stripped:
        stripped += ", " + plural(full.documents_stripped, "document")
    dash = "—"
    summarised = max(0, preview.pre_tokens - sm.kept_tokens)
    rows = [
        (
            "summarised",
            f"{plural(sm.keep_start_index or 0, 'msg')}, ≈{summarised:,}" if sm_ok else dash,
            f"{plural(full.summarized_messages, 'msg')}, request ≈{full.request_tokens:,}",
        ),
        (
            "kept",
            f"{plural(sm.kept_messages, 'msg')}, {sm.kept_tokens:,}" if sm_ok else dash,
            "none",
        ),
        (
            "restored",
            "plan file only" if sm_ok else dash,
            restored_text,
        ),
        ("images stripped", "none" if sm_ok else dash, stripped),
        (
            "summary",
            f"notes ≈{sm.summary_tokens:,}" if sm_ok else dash,
            f"model, ≤{full.max_output_tokens:,}",
        ),
        (
            "after",
            f"≈{sm.context_after_tokens:,}" if sm_ok else dash,
            f"≤{restored_tokens(preview) + full.max_output_tokens:,}",
        ),
    ]
    chosen_sm = preview.chosen == "session_memory"
    label_w = max(len(r[0]) for r in rows) + 2
    sm_w = max(len("Session memory ●"), *(len(r[1]) for r in rows)) + 3
    on, off = "bold $text-success", "bold $foreground-muted"
    lines = [
        Content.assemble(
            " " * label_w,
            (
                ("Session memory ●" if chosen_sm else "Session memory").ljust(sm_w),
                on if chosen_sm else off,
            ),
            ("Full" if chosen_sm else "Full ●", off if chosen_sm else on),
        )
    ]
    for label, left, right in rows:
        lines.append(
            Content.assemble(
                (label.ljust(label_w), "$foreground-muted"),
                (left.ljust(sm_w), "" if chosen_sm else "$foreground-muted"),
                (right, "$foreground-muted" if chosen_sm else ""),
            )
        )
    return Content("\n").join(lines)


def micro_section(preview: CompactPreview) -> Section:
    """Time-based micro-compaction: would it run, and what would clearing save."""
    micro = preview.microcompact
    if micro.triggers_now:
        state = Content.styled("▲ would run before the next request", "bold $text-warning")
    elif micro.enabled:
        state = Content.styled("on, not due yet", "$foreground-muted")
    else:
        state = Content.styled("off by default", "$foreground-muted")
    title = Content.assemble(("Micro-compaction", "bold"), "  ", state)
    lines: list[Content] = []
    if micro.cleared:
        by_tool = Counter(c.tool for c in micro.cleared)
        tools = ", ".join(f"{name} ×{count}" for name, count in by_tool.most_common())
        lead = "clears" if micro.triggers_now else "if it ran, it would clear"
        lines.append(
            Content.assemble(
                f"{lead} ",
                (f"{micro.tool_results_cleared}", "bold"),
                f" of {plural(micro.compactable_tool_uses, 'tool result')} ({tools}), saving ",
                (f"{micro.tokens_saved:,} tokens", f"bold {KEPT}"),
                f"; the newest {len(micro.kept_tool_use_ids)} stay",
            )
        )
    else:
        lines.append(Content.styled("nothing to clear: no old tool results", "$foreground-muted"))
    detail = micro.reason
    if micro.gap_minutes is not None:
        detail += f" · last reply {duration_words(micro.gap_minutes)} before now"
    if micro.already_cleared:
        detail += f" · {micro.already_cleared} already cleared"
    lines.append(Content.styled(detail, "$foreground-muted"))
    return title, Content("\n").join(lines)


def files_section(preview: CompactPreview, root: str | None) -> Section:
    """The files (and skills) a full compaction re-attaches, and the ones left out."""
    plan = preview.files
    restored = plan.restored
    considered = len(plan.files) + len(plan.skipped)
    title = Content.assemble(
        ("Restored after a full compaction", "bold"),
        (
            f"  {len(restored)} of {plural(considered, 'file')} read · {plan.total_tokens:,} tokens",
            "$foreground-muted",
        ),
    )
    lines: list[Content] = []
    if not considered and not preview.skills:
        lines.append(
            Content.styled("no file was read since the last boundary", "$foreground-muted")
        )
    names = [short_path(f.path, root) for f in plan.files]
    name_w = min(44, max((len(n) for n in names), default=0))
    # Not sized from the file on disk: "≈" on the figure, and what it came from.
    figures = [("≈" if f.size_note else "") + f"{f.tokens:,}" for f in plan.files]
    token_w = max((len(figure) for figure in figures), default=1)
    for f, name, figure in zip(plan.files, names, figures, strict=True):
        usual = f.included and f.reason == "attached in full"
        notes = [note for note in ("" if usual else f.reason, f.size_note) if note]
        lines.append(
            Content.assemble(
                ("+ ", RESTORED) if f.included else ("− ", "$foreground-muted"),
                (name.ljust(name_w), "" if f.included else "$foreground-muted"),
                (f"  {figure:>{token_w}}", "bold" if f.included else "$foreground-muted"),
                ("  " + " · ".join(notes) if notes else "", "$foreground-muted"),
            )
        )
    for skill in preview.skills:
        lines.append(
            Content.assemble(
                ("+ ", RESTORED) if skill.included else ("− ", "$foreground-muted"),
                f"skill {skill.name}",
                (f"  {skill.tokens:,}", "bold"),
                (f"  {skill.reason}", "$foreground-muted"),
            )
        )
    by_reason: dict[str, list[str]] = {}
    for path, why in plan.skipped:
        by_reason.setdefault(why, []).append(os.path.basename(path) or path)
    for why, skipped in by_reason.items():
        shown = ", ".join(skipped[:MAX_FILES_SHOWN])
        more = (
            f" and {len(skipped) - MAX_FILES_SHOWN} more" if len(skipped) > MAX_FILES_SHOWN else ""
        )
        lines.append(
            Content.styled(
                f"− {plural(len(skipped), 'file')} left out, {why}: {shown}{more}",
                "$foreground-muted",
            )
        )
    return title, Content("\n").join(lines)


def _item_text(item: SurvivalItem, root: str | None, kind: str) -> str:
    value = short_path(item.value, root) if kind == "paths" else item.value
    return value + (f"  ×{item.count}" if item.count > 1 else "")


def survival_section(
    survival: SurvivalReport, root: str | None, *, summary_label: str | None = None
) -> Section:
    """The facts of the summarised span and, given a summary, which of them it lost."""
    items_total = sum(len(getattr(survival, kind)) for kind, _ in SURVIVAL_KINDS)
    lost_total = sum(len(v) for v in survival.lost().values()) if survival.summary_given else 0
    title = Content.assemble(
        ("Survival check", "bold"),
        (
            f"  {plural(items_total, 'fact')} in the {plural(survival.span_messages, 'message')} "
            "a summary replaces",
            "$foreground-muted",
        ),
    )
    lines: list[Content] = []
    if survival.summary_given:
        source = summary_label or survival.summary_source or "the summary"
        if source == "session notes":
            source = "the session notes, which become the summary"
        verdict = (
            Content.styled(f"✗ {lost_total} lost", "bold $text-error")
            if lost_total
            else Content.styled("✓ nothing lost", "bold $text-success")
        )
        lines.append(
            Content.assemble(verdict, ("  checked against ", "$foreground-muted"), (source, "bold"))
        )
    else:
        lines.append(
            Content.assemble(
                ("no summary to check yet (", "$foreground-muted"),
                ("c", "bold $text-accent"),
                (" pastes or loads one); these are the facts it must keep:", "$foreground-muted"),
            )
        )
    if not items_total:
        lines.append(
            Content.styled(
                "nothing to check: the span names no paths, commands, numbers or identifiers",
                "$foreground-muted",
            )
        )
    for kind, label in SURVIVAL_KINDS:
        items: Sequence[SurvivalItem] = getattr(survival, kind)
        if not items:
            continue
        lost = [i for i in items if i.kept is False]
        others = [i for i in items if i.kept is not False]
        lines.append(
            Content.assemble(
                (f"{label} {len(items)}", "bold"),
                (f" · {len(lost)} lost", "bold $text-error") if lost else "",
            )
        )
        for item in lost[:MAX_LOST_SHOWN]:
            lines.append(Content.styled(f"  ✗ {_item_text(item, root, kind)}", "$text-error"))
        if len(lost) > MAX_LOST_SHOWN:
            lines.append(
                Content.styled(f"    … and {len(lost) - MAX_LOST_SHOWN} more lost", "$text-error")
            )
        mark = (
            ("  ✓ ", "$text-success") if survival.summary_given else ("  · ", "$foreground-muted")
        )
        for item in others[:MAX_OTHERS_SHOWN]:
            lines.append(Content.assemble(mark, _item_text(item, root, kind)))
        if len(others) > MAX_OTHERS_SHOWN:
            rest = len(others) - MAX_OTHERS_SHOWN
            tail = " kept" if survival.summary_given else ""
            lines.append(Content.styled(f"    … and {rest} more{tail}", "$foreground-muted"))
    if root:
        lines.append(Content.styled(f"paths are relative to {root}", "$foreground-muted italic"))
    return title, Content("\n").join(lines)


def history_section(records: Sequence[CompactionRecord], root: str | None) -> Section:
    """The session's real compactions (recorded by the hooks), newest first, each with what
    its summary lost."""
    title = Content.assemble(
        ("Real compactions of this session", "bold"),
        (f"  {plural(len(records), 'compaction')} recorded by the hooks", "$foreground-muted"),
    )
    lines: list[Content] = []
    for record in reversed(records):
        snap, report = record.snapshot, record.report
        head = [record.created[:16].replace("T", " ") + " UTC"]
        if snap is not None:
            head += [snap.trigger or "?", f"{snap.pre_tokens:,} tokens"]
            head.append(plural(snap.summarised_messages, "message") + " summarised")
        lines.append(Content.assemble(("▸ ", "$text-accent"), (" · ".join(head), "bold")))
        if report is None:
            lines.append(
                Content.styled("  waiting for the summary (PostCompact)", "$foreground-muted")
            )
            continue
        if not report.checked:
            lines.append(Content.styled(f"  ? not checked: {report.note}", "$text-warning"))
            continue
        total = snap.fact_count if snap else 0
        source = "the summary in the transcript"
        if report.summary_source != "transcript":
            source = "the summary the hook received"
        if not report.lost_count:
            lines.append(
                Content.assemble(
                    ("  ✓ nothing lost", "bold $text-success"),
                    (f" of {plural(total, 'fact')}, checked against {source}", "$foreground-muted"),
                )
            )
            continue
        lines.append(
            Content.assemble(
                (f"  ✗ {report.lost_count} of {plural(total, 'fact')} lost", "bold $text-error"),
                (f", checked against {source}", "$foreground-muted"),
            )
        )
        for kind, label in SURVIVAL_KINDS:
            lost = list(report.lost.get(kind, ()))
            if not lost:
                continue
            shown = [short_path(v, root) if kind == "paths" else v for v in lost]
            more = len(shown) - MAX_HISTORY_LOST_SHOWN
            text = ", ".join(shown[:MAX_HISTORY_LOST_SHOWN]) + (
                f" and {more} more" if more > 0 else ""
            )
            lines.append(
                Content.assemble((f"    {label}: ", "$foreground-muted"), (text, "$text-error"))
            )
    return title, Content("\n").join(lines)


def session_prompt(info: SessionInfo) -> Content:
    """One session in the picker: when, title, size."""
    from workbench.ui.panes.session_view import session_when

    title = (info.title or "untitled").replace("\n", " ")
    notes = " · notes" if info.has_session_memory else ""
    return Content.assemble(
        (session_when(info)[5:], "bold"),  # `11-29 08:33`: the year adds nothing here
        "  ",
        title,
        (
            f"  {info.context_tokens:,} tok · {plural(info.messages, 'msg')}{notes}",
            "$foreground-muted",
        ),
    )


# --- the summary dialog -------------------------------------------------------------------


def preview_sections(
    preview: CompactPreview,
    history: Sequence[CompactionRecord],
    summary_label: str | None,
) -> dict[str, Section]:
    """Every titled section below the bars, by name, in `SECTIONS` order."""
    root = preview_root(preview)
    return {
        "sm": session_memory_section(preview),
        "full": full_section(preview),
        "micro": micro_section(preview),
        "files": files_section(preview, root),
        "survival": survival_section(preview.survival, root, summary_label=summary_label),
        "history": history_section(history, root),
    }
