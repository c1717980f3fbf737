"""The compaction preview: what a compaction of one session would keep, summarise and restore.

For the chosen transcript the pane lays out the engine's dry run (`engine.context.
compact_preview`): the context against the auto-compact threshold, which path Claude Code
would take (session memory or full) and why, the kept / summarised / restored split as bars
and numbers, micro-compaction savings, cut note sections, and the survival check of the
paths, commands, numbers and identifiers in the span a summary replaces.

Disk work runs in thread workers; results come back as messages that set the reactives.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.engine.errors import OperationCancelled, WorkbenchError
from workbench.ui.actions import ActionSpec
from workbench.ui.formatting import duration_words
from workbench.ui.panes.base import Pane
from workbench.ui.widgets.split_bar import BarMark, BarPart, SplitBar

if TYPE_CHECKING:
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.context.compaction.survival import SurvivalItem, SurvivalReport
    from workbench.engine.context.compaction_log import CompactionRecord
    from workbench.engine.context.transcript import SessionInfo
    from workbench.engine.progress import Progress

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-compaction",
        "f5",
        "refresh_compaction",
        "Refresh",
        "Compaction: Refresh preview",
        "List the sessions again and re-run the dry run on the chosen one",
        scope="pane",
    ),
    ActionSpec(
        "pick-session",
        "s",
        "pick_session",
        "Session",
        "Compaction: Pick session",
        "Choose which session transcript the compaction preview runs on",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "load-summary",
        "c",
        "load_summary",
        "Check summary",
        "Compaction: Check a summary",
        "Paste a summary or load one from a file and see which facts of the span it lost",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "cancel-preview",
        "escape",
        "cancel_preview",
        "Cancel",
        "Compaction: Cancel the preview",
        "Stop reading a big transcript for the dry run (f5 runs it again)",
        scope="pane",
    ),
)
"""The pane's verbs (binding id, keys, palette title and help line)."""

# Colours of the split, shared by the bars and the legend.
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


@dataclass(frozen=True)
class SummaryChoice:
    """A summary to check the span against: pasted text or a file (neither: the default)."""

    text: str | None = None
    path: str | None = None

    @property
    def is_default(self) -> bool:
        """No summary of the user's: the engine's default (the session notes, if used)."""
        return not self.text and not self.path

    @property
    def label(self) -> str:
        """How the survival check names it (never an absolute path)."""
        if self.text:
            return f"the pasted summary ({len(self.text):,} characters)"
        if self.path:
            return f"the summary file {os.path.basename(self.path.rstrip('/'))}"
        return "the default"


# --- pure helpers: preview → display ------------------------------------------------------


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 message`, `3 messages`."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


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
        return sm.kept_tokens + sm.summary_tokens, False
    return restored_tokens(preview) + preview.full.max_output_tokens, True


Section = tuple[Content, Content]
"""A section's title line and its body (the body is indented, so wrapped lines stay in)."""


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
            f"≈{sm.kept_tokens + sm.summary_tokens:,}" if sm_ok else dash,
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
    token_w = max((len(f"{f.tokens:,}") for f in plan.files), default=1)
    for f, name in zip(plan.files, names, strict=True):
        usual = f.included and f.reason == "attached in full"
        lines.append(
            Content.assemble(
                ("+ ", RESTORED) if f.included else ("− ", "$foreground-muted"),
                (name.ljust(name_w), "" if f.included else "$foreground-muted"),
                (f"  {f.tokens:>{token_w},}", "bold" if f.included else "$foreground-muted"),
                ("" if usual else f"  {f.reason}", "$foreground-muted"),
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
    from workbench.ui.panes.session import session_when

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


class SummaryModal(ModalScreen[SummaryChoice | None]):
    """Paste a summary or name a file; dismisses with the choice, or None to cancel.

    Cancelling keeps what was typed (`draft`): the pane offers it again next time, so a long
    paste is never lost to one Esc. A file that is not there is said in the dialog, which stays
    open.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CSS = """
    SummaryModal {
        & #summary-text { height: 10; margin-bottom: 1; }
        & #summary-file { margin-bottom: 1; }
    }
    """

    def __init__(
        self,
        current: SummaryChoice | None = None,
        *,
        draft: SummaryChoice | None = None,
        resolve: Callable[[str], Path] | None = None,
    ) -> None:
        super().__init__(classes="modal")
        self.current = current
        self._start = draft if draft is not None else current
        self._resolve = resolve
        self.draft: SummaryChoice | None = None
        """What the boxes held when the dialog was cancelled."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Check a summary", classes="dialog-title")
            yield Static(
                "Give the path of a file holding a summary, or paste one (for example what "
                "Claude Code wrote at /compact; pasted text wins over a file). The survival "
                "check marks which paths, commands, numbers and identifiers of the summarised "
                "span it lost. Enter or Check runs it; Esc closes and keeps what you typed.",
                classes="dialog-detail summary-hint",
            )
            yield Input(
                (self._start.path or "") if self._start else "",
                placeholder="Summary file (relative to the project, or ~/…)",
                id="summary-file",
            )
            yield TextArea(
                (self._start.text or "") if self._start else "",
                id="summary-text",
                soft_wrap=True,
                placeholder="…or paste the summary text here",
            )
            with Horizontal(classes="dialog-buttons"):
                if self.current is not None and not self.current.is_default:
                    yield Button("Back to default", id="summary-default")
                yield Button("Cancel", id="summary-cancel")
                yield Button("Check", id="summary-check", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#summary-file", Input).focus()

    def action_cancel(self) -> None:
        text = self.query_one("#summary-text", TextArea).text
        path = self.query_one("#summary-file", Input).value.strip()
        self.draft = SummaryChoice(text=text or None, path=path or None)
        self.dismiss(None)

    def _choice(self) -> SummaryChoice | None:
        text = self.query_one("#summary-text", TextArea).text
        path = self.query_one("#summary-file", Input).value.strip()
        if text.strip():
            return SummaryChoice(text=text)
        if path:
            return SummaryChoice(path=path)
        return None

    @on(Input.Submitted, "#summary-file")
    def _file_submitted(self) -> None:
        self._check()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "summary-check":
            self._check()
        elif event.button.id == "summary-default":
            self.dismiss(SummaryChoice())
        else:
            self.action_cancel()

    def _say(self, problem: str) -> None:
        hint = self.query_one(".summary-hint", Static)
        hint.update(Content(problem))
        hint.add_class("-invalid")

    def _check(self) -> None:
        choice = self._choice()
        if choice is None:
            self._say("Paste a summary or give a file path first (Esc closes).")
            return
        if choice.path and self._resolve is not None:
            path = self._resolve(choice.path)
            if not path.is_file():
                what = "a folder" if path.is_dir() else "no file"
                self._say(
                    f"{choice.path} is {what}: give the path of a summary file, or paste one."
                )
                self.query_one("#summary-file", Input).focus()
                return
        self.dismiss(choice)


# --- the pane -----------------------------------------------------------------------------


class CompactionPane(Pane):
    """The compaction dry run for one session transcript."""

    pane_id = "compaction"
    title = "Compaction preview"
    focus_target = ".compaction-scroll"
    empty_title = "Reading sessions…"
    empty_message = "The dry run appears once this project's transcripts have been listed."

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]
    DEFAULT_CSS = """
    CompactionPane {
        & .compaction-top { height: auto; margin-top: 1; }
        & #compaction-session { width: 1fr; }
        & #compaction-session Static#label { text-wrap: nowrap; text-overflow: ellipsis; }
        & #compaction-session SelectOverlay { text-wrap: nowrap; text-overflow: ellipsis; }
        & .compaction-status { width: auto; padding: 0 1; color: $text-muted; }
        & .compaction-scroll { height: 1fr; scrollbar-size-vertical: 1; }
        & .compaction-headline { margin-top: 1; }
        & .compaction-bars { margin-top: 1; }
        & .section-title { margin-top: 1; }
        & .section-body { padding-left: 2; }
        & .compaction-numbers { margin-top: 1; padding-left: 2; }
        & .bar-row { height: 1; }
        & .bar-label { width: 8; color: $text-muted; }
        & .bar-value { width: 10; text-align: right; }
    }
    """

    sessions: reactive[tuple[SessionInfo, ...]] = reactive(tuple, init=False)
    """The project's sessions, newest first."""
    session_id: reactive[str | None] = reactive(None, init=False)
    """The session the preview is for."""
    preview: reactive[CompactPreview | None] = reactive(None, init=False)
    """The dry run on show."""
    summary: reactive[SummaryChoice | None] = reactive(None, init=False)
    """A summary of the user's to check the span against (None: the engine's default)."""
    busy: reactive[bool] = reactive(False, init=False)
    """A preview is being computed."""
    history: reactive[tuple[CompactionRecord, ...]] = reactive(tuple, init=False)
    """The session's real compactions, as the hooks recorded them."""

    class SessionsLoaded(Message):
        """The sessions were listed."""

        def __init__(self, sessions: tuple[SessionInfo, ...]) -> None:
            super().__init__()
            self.sessions = sessions

    class Previewed(Message):
        """A dry run finished."""

        def __init__(
            self,
            session_id: str,
            preview: CompactPreview,
            summary: SummaryChoice | None,
            history: tuple[CompactionRecord, ...] = (),
        ) -> None:
            super().__init__()
            self.session_id = session_id
            self.preview = preview
            self.summary = summary
            """The summary it was checked against (None: the default)."""
            self.history = history
            """The session's recorded compactions."""

    class PreviewFailed(Message):
        """Listing sessions or the dry run failed, with a message for the user."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class PreviewProgress(Message):
        """How far the dry run has got (posted from its worker)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        *,
        now_ms: Callable[[], float] | None = None,
        autoload: bool = True,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._autoload = autoload
        self._loaded = False
        self._summary_draft: SummaryChoice | None = None
        self._progress = ""
        """What the running preview is doing ("reading 40%"), for the status."""
        self._cancelled = False
        """The user stopped the last preview (the status says so until the next one)."""

    # --- layout ------------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        with Horizontal(classes="compaction-top"):
            yield Select[str]((), prompt="Session", id="compaction-session", compact=True)
            yield Static(classes="compaction-status")
        with VerticalScroll(classes="compaction-scroll"):
            yield Static(classes="compaction-headline")
            yield Static(classes="compaction-headline-detail section-body")
            with Horizontal(classes="bar-row compaction-bars"):
                yield Static("before", classes="bar-label")
                yield SplitBar(classes="compaction-before")
                yield Static(classes="bar-value compaction-before-value")
            with Horizontal(classes="bar-row"):
                yield Static("after", classes="bar-label")
                yield SplitBar(classes="compaction-after")
                yield Static(classes="bar-value compaction-after-value")
            yield Static(classes="compaction-legend")
            for name in SECTIONS:
                yield Static(classes=f"section-title {name}-title")
                yield Static(classes=f"section-body {name}-body")
                if name == "full":
                    yield Static(classes="compaction-numbers")

    def on_mount(self) -> None:
        self.border_title = self.title
        self._update_status()
        if self.preview is not None:
            self._render_preview(self.preview)

    def on_show(self) -> None:
        # Loading waits for the first time the pane is shown: start-up stays light.
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load_sessions()

    # --- feeding the pane ----------------------------------------------------------------

    def show_sessions(
        self, sessions: Sequence[SessionInfo], *, selected: str | None = None
    ) -> None:
        """Fill the session picker (without starting a preview)."""
        self.sessions = tuple(sessions)
        if not sessions:
            self.set_empty(
                "No sessions yet",
                "Claude Code has not written a transcript for this project, so there is "
                "nothing to compact. Sessions appear here after the first conversation.",
            )
            return
        ids = [s.session_id for s in sessions]
        chosen = selected if selected in ids else ids[0]
        self.session_id = chosen
        picker = self.query_one("#compaction-session", Select)
        picker.set_options((session_prompt(s), s.session_id) for s in sessions)
        picker.value = chosen

    def show_preview(
        self,
        preview: CompactPreview,
        *,
        session_id: str | None = None,
        history: Sequence[CompactionRecord] | None = None,
    ) -> None:
        """Show a dry run and the session's recorded compactions (the workers call this;
        tests may too)."""
        if session_id is not None:
            self.session_id = session_id
        if history is not None:
            self.set_reactive(CompactionPane.history, tuple(history))
        self.preview = preview

    def show_error(self, error: str) -> None:
        """Say why nothing can be shown (keeps an earlier preview if there is one)."""
        if self.preview is None:
            self.set_empty("Cannot preview compaction", error)
        else:
            self.notify(error, title="Compaction preview", severity="error")

    def watch_preview(self, preview: CompactPreview | None) -> None:
        if preview is not None:
            self._render_preview(preview)

    def watch_busy(self) -> None:
        self._update_status()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_preview":
            return True if self.busy else None  # otherwise escape goes back to the tree
        return True

    def watch_summary(self) -> None:
        self._update_status()

    def _update_status(self) -> None:
        statuses = self.query(".compaction-status").results(Static)
        if self.busy:
            doing = self._progress or "previewing…"
            text = Content.styled(f"{doing} · esc cancels", "$text-warning")
        elif self._cancelled:
            text = Content.styled("preview cancelled · f5 runs it again", "$text-warning")
        elif self.summary is not None and not self.summary.is_default:
            text = Content.assemble(
                ("checking ", "$foreground-muted"), (self.summary.label, "bold")
            )
        else:
            text = Content.assemble(
                ("c", "bold $text-accent"), (" check a summary", "$foreground-muted")
            )
        for status in statuses:
            status.update(text)

    # --- rendering -----------------------------------------------------------------------

    def _render_preview(self, preview: CompactPreview) -> None:
        root = preview_root(preview)
        sm = preview.session_memory
        self.query_one(".compaction-headline", Static).update(headline_content(preview))
        self.query_one(".compaction-headline-detail", Static).update(headline_detail(preview))
        scale = max(preview.pre_tokens, preview.threshold, 1) * 1.04
        threshold = BarMark(preview.threshold, THRESHOLD)
        summarised = summarised_tokens(preview)
        after, upper_bound = after_estimate(preview)
        if preview.chosen == "session_memory":
            before_parts = [BarPart(summarised, SUMMARISED), BarPart(sm.kept_tokens, KEPT)]
            after_parts = [BarPart(sm.summary_tokens, SUMMARY), BarPart(sm.kept_tokens, KEPT)]
        else:
            before_parts = [BarPart(summarised, SUMMARISED)]
            after_parts = [
                BarPart(preview.full.max_output_tokens, SUMMARY, "▒"),
                BarPart(restored_tokens(preview), RESTORED),
            ]
        self.query_one(".compaction-before", SplitBar).update_bar(
            before_parts, scale=scale, marks=[threshold]
        )
        self.query_one(".compaction-after", SplitBar).update_bar(
            after_parts, scale=scale, marks=[threshold]
        )
        self.query_one(".compaction-before-value", Static).update(
            Content.styled(f"{preview.pre_tokens:,}", "bold")
        )
        self.query_one(".compaction-after-value", Static).update(
            Content.styled(f"{'≤' if upper_bound else '≈'}{after:,}", f"bold {KEPT}")
        )
        self.query_one(".compaction-legend", Static).update(
            Content.assemble((" " * 8, ""), legend_content(preview))
        )
        label = self.summary.label if self.summary and not self.summary.is_default else None
        sections: dict[str, Section] = {
            "sm": session_memory_section(preview),
            "full": full_section(preview),
            "micro": micro_section(preview),
            "files": files_section(preview, root),
            "survival": survival_section(preview.survival, root, summary_label=label),
            "history": history_section(self.history, root),
        }
        for name, (title, body) in sections.items():
            title_widget = self.query_one(f".{name}-title", Static)
            title_widget.update(title)
            body_widget = self.query_one(f".{name}-body", Static)
            body_widget.update(body)
            body_widget.display = bool(body.plain)
            if name == "history":  # only sessions the hooks saw compact have a history
                title_widget.display = bool(self.history)
        self.query_one(".compaction-numbers", Static).update(numbers_content(preview))
        self.has_content = True
        self.report_engine(engine_label(preview))

    # --- workers -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="compaction-sessions", exit_on_error=False)
    def _load_sessions(self) -> None:
        try:
            sessions = tuple(self.app.engine.context.sessions())  # type: ignore[attr-defined]
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.PreviewFailed(str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.SessionsLoaded(sessions))

    @on(SessionsLoaded)
    def _sessions_loaded(self, message: SessionsLoaded) -> None:
        message.stop()
        self.show_sessions(message.sessions, selected=self.session_id)
        if message.sessions:
            self._start_preview()

    @on(Select.Changed, "#compaction-session")
    def _session_picked(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.session_id:
            self.session_id = event.value
            self._start_preview()

    def _start_preview(self, summary: SummaryChoice | None | bool = True) -> None:
        """Preview the chosen session; `summary` replaces the current one (True: keep it)."""
        info = next((s for s in self.sessions if s.session_id == self.session_id), None)
        if info is None:
            return
        self._progress, self._cancelled = "", False
        self.busy = True
        wanted = self.summary if summary is True else summary
        self._run_preview(info.session_id, info.path, wanted or None)

    @work(thread=True, exclusive=True, group="compaction-preview", exit_on_error=False)
    def _run_preview(self, session_id: str, transcript: str, summary: SummaryChoice | None) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        now = datetime.fromtimestamp(self._now_ms() / 1000, tz=UTC)
        worker = get_current_worker()

        def progress(step: Progress) -> None:
            # Called in this thread by the engine: the way to stop it, and to show how far.
            if worker.is_cancelled:
                raise OperationCancelled("preview cancelled")
            shown = f"{step.task} {step.fraction:.0%}" if step.total else f"{step.task}…"
            self.post_message(self.PreviewProgress(shown))

        compact_preview = partial(engine.context.compact_preview, on_progress=progress)
        try:
            if summary is not None and summary.text:
                # The engine reads summaries from files; pasted text goes through a private
                # temporary file that is gone before the result is shown.
                with tempfile.TemporaryDirectory(prefix="workbench-summary-") as folder:
                    file = Path(folder) / "summary.md"
                    file.write_text(summary.text, encoding="utf-8")
                    preview = compact_preview(transcript, summary_file=str(file), now=now)
            elif summary is not None and summary.path:
                path = self._summary_path(summary.path)
                preview = compact_preview(transcript, summary_file=str(path), now=now)
            else:
                preview = compact_preview(transcript, now=now)
        except OperationCancelled:
            return  # the user's cancel (or a newer preview) already settled the status
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.PreviewFailed(str(exc)))
            return
        if summary is not None and not summary.is_default:
            survival = replace(preview.survival, summary_source=summary.label)
            preview = replace(preview, survival=survival)
        try:
            history = tuple(engine.context.compaction_log.records(session_id))
        except (WorkbenchError, OSError):
            history = ()  # the preview stands on its own; a missing history is no error
        if not get_current_worker().is_cancelled:
            self.post_message(self.Previewed(session_id, preview, summary, history))

    @on(Previewed)
    def _previewed(self, message: Previewed) -> None:
        message.stop()
        self.busy = False
        # A slow preview must not replace the session the user has moved on to.
        if message.session_id == self.session_id:
            # The summary sticks only once a preview with it succeeded.
            self.set_reactive(CompactionPane.summary, message.summary)
            new_history = message.history != self.history
            self.set_reactive(CompactionPane.history, message.history)
            self._update_status()
            unchanged = self.preview == message.preview
            self.preview = message.preview
            if unchanged and new_history:
                self._render_preview(message.preview)  # the watcher only fires on a new preview

    @on(PreviewProgress)
    def _preview_progressed(self, message: PreviewProgress) -> None:
        message.stop()
        if self.busy:
            self._progress = message.text
            self._update_status()

    def action_cancel_preview(self) -> None:
        """Stop the running dry run; what is on show stays (f5 runs it again)."""
        if self.busy:
            self.workers.cancel_group(self, "compaction-preview")
            self._cancelled = True
            self.busy = False

    @on(PreviewFailed)
    def _preview_failed(self, message: PreviewFailed) -> None:
        message.stop()
        self.busy = False
        self.show_error(message.error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Expected failures arrive as PreviewFailed; anything else still must not leave the
        # pane saying "previewing…" for ever.
        if event.state == WorkerState.ERROR and event.worker.group.startswith("compaction-"):
            self.busy = False
            self.show_error(f"The preview failed unexpectedly: {event.worker.error!r}")

    # --- actions -------------------------------------------------------------------------

    def action_refresh_compaction(self) -> None:
        """List the sessions again and re-run the preview."""
        self._loaded = True
        self._load_sessions()

    def action_pick_session(self) -> None:
        """Open the session picker."""
        if not self.sessions:
            self.notify("There are no sessions to pick from yet.", title="Compaction preview")
            return
        picker = self.query_one("#compaction-session", Select)
        picker.focus()
        picker.action_show_overlay()

    def action_load_summary(self) -> None:
        """Ask for a summary to check, then re-run the preview with it."""
        if self.session_id is None:
            self.notify("Pick a session first.", title="Compaction preview")
            return
        modal = SummaryModal(self.summary, draft=self._summary_draft, resolve=self._summary_path)
        self.app.push_screen(modal, partial(self._summary_chosen, modal))

    def _summary_path(self, value: str) -> Path:
        """A summary file named in the dialog: relative to the project, or `~/…`."""
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = Path(self.app.engine.locations.project_root) / path  # type: ignore[attr-defined]
        return path

    def _summary_chosen(self, modal: SummaryModal, choice: SummaryChoice | None) -> None:
        # A cancelled dialog's text comes back next time; a used one starts from the choice.
        self._summary_draft = modal.draft if choice is None else None
        if choice is None:
            return
        self._start_preview(None if choice.is_default else choice)
