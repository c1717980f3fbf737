"""The MEMORY.md pane: what Claude Code loads, where it cuts, and what is broken."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.engine.memories.models import IndexEntry, IndexReport
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.base import Pane

LONG_LINE = 200


def signed(value: int) -> str:
    """`+12` / `−3` with a real minus sign, thousands separated."""
    return f"+{value:,}" if value >= 0 else f"−{-value:,}"


def summary_content(report: IndexReport, label: str) -> Content:
    """The counts line: size against both limits and the headroom."""
    if not report.exists:
        return Content.assemble(
            (label, "bold"),
            (
                "  does not exist yet: Claude Code creates it with the first memory it saves.",
                "$foreground-muted",
            ),
        )
    over_lines = report.line_count > report.max_lines
    over_length = report.length > report.max_length
    return Content.assemble(
        (label, "bold"),
        "  ",
        (f"{report.line_count:,}", "bold $index-dropped" if over_lines else "bold"),
        f" / {report.max_lines} lines  ·  ",
        (f"{report.length:,}", "bold $index-dropped" if over_length else "bold"),
        f" / {report.max_length:,} chars  ·  headroom ",
        (
            signed(report.headroom.lines),
            "$index-dropped" if report.headroom.lines < 0 else "$index-loaded",
        ),
        " lines, ",
        (
            signed(report.headroom.length),
            "$index-dropped" if report.headroom.length < 0 else "$index-loaded",
        ),
        " chars",
    )


def entry_prompt(entry: IndexEntry, width: int) -> Content:
    """One index line with its loaded / dropped mark and any problem."""
    mark, mark_style = ("✓", "$index-loaded") if entry.loaded else ("✗", "$index-dropped")
    if entry.loaded and entry.target_exists is False:
        # Loaded, but it points at nothing: not a line to be pleased about.
        mark, mark_style = ("▲", "$index-dangling")
    text_style = "" if entry.loaded else "$foreground-muted strike"
    notes: list[Content] = []
    # Problems go before the text: long lines are cut off at the pane's edge.
    if entry.target_exists is False:
        notes.append(Content.styled("missing file ", "bold $index-dangling"))
    if len(entry.text) > LONG_LINE:
        notes.append(Content.styled(f"long ({len(entry.text)}) ", "$lint-warning"))
    return Content.assemble(
        (f"{entry.line:>{width}} ", "$foreground-muted"),
        (f"{mark} ", mark_style),
        *notes,
        (entry.text, text_style),
    )


def cut_prompt(report: IndexReport) -> Content:
    """The line Claude Code stops reading at, with why."""
    reasons = []
    if report.line_truncated:
        reasons.append(f"{report.max_lines}-line limit")
    if report.length_truncated:
        reasons.append(f"{report.max_length:,}-character limit")
    kept = report.loaded_lines
    text = f" cut: {kept} lines load, {report.dropped_lines} do not ({' and '.join(reasons)}) "
    return Content.styled(f"{'━' * 3}{text}".ljust(140, "━"), "bold $index-cut")


class IndexPane(Pane):
    """The load report for the private or the team MEMORY.md."""

    pane_id = "index"
    title = "MEMORY.md"
    focus_target = ".index-lines"
    empty_title = "Reading MEMORY.md…"
    empty_message = "The load report appears once the memory folder has been scanned."

    report: reactive[IndexReport | None] = reactive(None, init=False)
    """The load report on show."""
    team: reactive[bool] = reactive(False, init=False)
    """Whether `report` is the team index."""

    def compose_body(self) -> ComposeResult:
        yield Static(classes="index-summary")
        yield Static(classes="index-warning")
        yield OptionList(classes="index-lines")
        yield Static(classes="index-problems")

    _stale = False

    class Ready(Message):
        """The pane is mounted and wants the latest report."""

    def on_mount(self) -> None:
        if self.report is not None:
            self._render_report(self.report)
        else:
            self.post_message(self.Ready())

    def show_report(self, report: IndexReport | None, *, team: bool = False) -> None:
        """Show a load report (None: the team index does not exist)."""
        self.set_reactive(IndexPane.team, team)
        self.report = report
        if report is None:
            self.set_empty("No team MEMORY.md", "This project has no team memory folder.")

    def watch_report(self, report: IndexReport | None) -> None:
        if report is None:
            return
        if self._is_shown():
            self._render_report(report)
        else:
            # A 10,000-line index is thousands of options: build them when the pane is shown.
            self._stale = True

    def _is_shown(self) -> bool:
        return all(node.display for node in self.ancestors_with_self if isinstance(node, Widget))

    def on_show(self) -> None:
        if self._stale and self.report is not None:
            self._render_report(self.report)

    def _render_report(self, report: IndexReport) -> None:
        self._stale = False
        label = "team/MEMORY.md" if self.team else "MEMORY.md"
        self.border_title = label
        self.query_one(".index-summary", Static).update(summary_content(report, label))
        warning = self.query_one(".index-warning", Static)
        warning.display = bool(report.warning)
        if report.warning:
            warning.update(Content.styled(report.warning.strip(), "$text-error"))
        options = self.query_one(".index-lines", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        width = len(str(max((e.line for e in report.entries), default=1)))
        cut_drawn = False
        prompts: list[Option] = []
        for entry in report.entries:
            if not entry.loaded and not cut_drawn:
                prompts.append(Option(cut_prompt(report), id="cut", disabled=True))
                cut_drawn = True
            prompts.append(Option(entry_prompt(entry, width), id=f"line-{entry.line}"))
        options.add_options(prompts)
        if highlighted is not None and highlighted < len(prompts):
            options.highlighted = highlighted
        elif options.has_focus:
            options.action_first()
        self.query_one(".index-problems", Static).update(self._problems_content(report))
        self.has_content = True

    def _problems_content(self, report: IndexReport) -> Content:
        parts: list[Content] = []
        if report.dangling:
            parts.append(
                Content.assemble(
                    (f"Dangling ({len(report.dangling)}): ", "bold $index-dangling"),
                    ", ".join(report.dangling),
                    ("   alt+d removes these lines", "$foreground-muted"),
                )
            )
        if report.orphans:
            parts.append(
                Content.assemble(
                    (f"Orphans ({len(report.orphans)}): ", "bold $lint-warning"),
                    "no line links to ",
                    ", ".join(report.orphans[:12]),
                    f" and {len(report.orphans) - 12} more" if len(report.orphans) > 12 else "",
                    ("   alt+o adds them", "$foreground-muted"),
                )
            )
        if report.long_lines:
            parts.append(
                Content.assemble(
                    (f"Long lines ({len(report.long_lines)}): ", "bold $lint-warning"),
                    ", ".join(str(n) for n in report.long_lines[:20]),
                    ("   alt+l shortens them", "$foreground-muted"),
                )
            )
        if not parts:
            parts.append(
                Content.styled("No dangling links, orphans or long lines.", "$index-loaded")
            )
        return Content("\n").join(parts)

    @on(OptionList.OptionSelected, ".index-lines")
    def _open_target(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.report is None or not event.option.id or not event.option.id.startswith("line-"):
            return
        number = int(event.option.id.removeprefix("line-"))
        entry = next((e for e in self.report.entries if e.line == number), None)
        if entry is None or not entry.target or not entry.target_exists:
            return
        local = entry.local_target
        if local:
            self.post_message(OpenMemoryRequested(("team/" if self.team else "") + local))
