"""The MEMORY.md pane: what Claude Code loads, where it cuts, and what is broken."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from workbench.engine.memories.models import IndexEntry, IndexReport
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.base import Pane

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

LONG_LINE = 200
LINES_PER_BATCH = 500
"""Index lines handed to the list per turn of the UI thread (a 9,000-line index in 18)."""
ONE_LINE: RulesMap = {"text_wrap": "nowrap", "text_overflow": "ellipsis"}
"""The list's text rules (app.tcss): every prompt is one line, whatever its length."""


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


def short_warning(report: IndexReport) -> Content:
    """The cut in one sentence, for a short screen."""
    return Content.styled(
        f"Claude Code reads only {report.loaded_lines} of {report.line_count} lines; "
        "the rest never reaches it.",
        "$text-error",
    )


def short_problems(report: IndexReport) -> Content:
    """Each kind of problem as a count and the key that fixes it, for a short screen."""
    kinds = [
        (len(report.dangling), "Dangling", "alt+d", "$index-dangling"),
        (len(report.orphans), "Orphans", "alt+o", "$lint-warning"),
        (len(report.long_lines), "Long lines", "alt+l", "$lint-warning"),
    ]
    parts = [
        Content.assemble((f"{name} {count}", f"bold {style}"), " ", (key, "$foreground-muted"))
        for count, name, key, style in kinds
        if count
    ]
    if not parts:
        return Content.styled("No dangling links, orphans or long lines.", "$index-loaded")
    return Content(" · ").join(parts)


def line_options(report: IndexReport, width: int) -> list[Option]:
    """Every index line as a list option, the cut drawn where Claude Code stops, each prompt's
    height measured at `width` (pure: runs off the UI thread)."""
    digits = len(str(max((e.line for e in report.entries), default=1)))
    cut_drawn = False
    options: list[Option] = []
    for entry in report.entries:
        if not entry.loaded and not cut_drawn:
            options.append(Option(cut_prompt(report), id="cut", disabled=True))
            cut_drawn = True
        prompt = entry_prompt(entry, digits)
        # The list measures each prompt's height before its first frame; measured here, that
        # is a cache hit on the UI thread (a 9,000-line index took about 0.3 s there).
        prompt.get_height(ONE_LINE, width)
        options.append(Option(prompt, id=f"line-{entry.line}"))
    return options


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
        # Each report has a long and a short form; the stylesheet shows the short one on a
        # short screen, where the long one would be clipped mid-sentence.
        yield Static(classes="index-warning")
        yield Static(classes="index-warning-short")
        yield OptionList(classes="index-lines")
        yield Static(classes="index-problems")
        yield Static(classes="index-problems-short")

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
        self.set_class(bool(report.warning), "-cut")
        if report.warning:
            warning = Content.styled(report.warning.strip(), "$text-error")
            self.query_one(".index-warning", Static).update(warning)
            short = short_warning(report)
            self.query_one(".index-warning-short", Static).update(short)
        options = self.query_one(".index-lines", OptionList)
        self.query_one(".index-problems", Static).update(self._problems_content(report))
        self.query_one(".index-problems-short", Static).update(short_problems(report))
        # The list is laid out once the pane shows its content: measure the lines after that,
        # at the width they will be drawn at.
        self.has_content = True
        self.call_after_refresh(self._fill_when_laid_out, report, options.highlighted)

    def _fill_when_laid_out(self, report: IndexReport, highlighted: int | None) -> None:
        if self.report is report:  # not replaced meanwhile
            options = self.query_one(".index-lines", OptionList)
            self._fill_lines(report, _prompt_width(options, report), highlighted)

    # A description of our own: without one Textual names the worker by the repr of its
    # arguments, on the UI thread, and the repr of a 9,000-entry report took ~100 ms.
    @work(
        thread=True,
        exclusive=True,
        group="index-lines",
        exit_on_error=False,
        description="MEMORY.md lines",
    )
    def _fill_lines(self, report: IndexReport, width: int, highlighted: int | None) -> None:
        """Build the lines in a thread, then hand them to the list a batch per turn of the
        UI thread, so a long index never freezes the screen."""
        prompts = line_options(report, width)
        worker = get_current_worker()
        for start in range(0, max(len(prompts), 1), LINES_PER_BATCH):
            if worker.is_cancelled:
                return  # a newer report is on its way
            batch = prompts[start : start + LINES_PER_BATCH]
            if not self._on_ui_thread(self._add_lines, batch, clear=start == 0):
                return
        if not worker.is_cancelled:
            self._on_ui_thread(self._lines_added, highlighted, len(prompts))

    def _on_ui_thread(self, callback: Callable[..., object], *args: object, **kw: object) -> bool:
        """Run `callback` on the UI thread and wait for it; False once the app has stopped
        (quitting while a long index is still being handed over)."""
        try:
            self.app.call_from_thread(callback, *args, **kw)
        except RuntimeError:
            return False
        return True

    def _add_lines(self, batch: list[Option], *, clear: bool) -> None:
        options = self.query_one(".index-lines", OptionList)
        if clear:
            options.clear_options()
        options.add_options(batch)

    def _lines_added(self, highlighted: int | None, count: int) -> None:
        options = self.query_one(".index-lines", OptionList)
        if highlighted is not None and highlighted < count:
            options.highlighted = highlighted
        elif options.has_focus:
            options.action_first()

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


def _prompt_width(options: OptionList, report: IndexReport) -> int:
    """The width the list will measure its prompts at: its content region less the options'
    padding and, once the lines overflow it, the scrollbar (as `OptionList` computes it; a
    different width would measure every prompt again on the UI thread). A plain OptionList
    draws nothing left of its prompts (a SelectionList's checkboxes are such a gutter)."""
    padding = options.get_component_styles("option-list--option").padding
    region = options.scrollable_content_region
    width = region.width - padding.width
    if not options.show_vertical_scrollbar and len(report.entries) + 1 > region.height:
        width -= options.styles.scrollbar_size_vertical
    return max(1, width)
