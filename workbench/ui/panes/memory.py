"""The memory viewer: frontmatter, lint findings and the body, rendered or as source."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.engine.memories.models import LintFinding, MemoryDocument
from workbench.engine.models import format_file_size
from workbench.ui.formatting import (
    SEVERITY_MARKS,
    SEVERITY_ORDER,
    TYPE_BADGES,
    age_days,
    age_long,
)
from workbench.ui.panes.base import Pane
from workbench.ui.widgets.key_value_rows import KeyValueRows

# Rendering a huge body as markdown would stall the screen; the source view shows the rest.
MAX_RENDERED_CHARS = 100_000
SCOPE_LABELS = {"private": "private", "team": "team", "log": "daily log"}


def badge(memory_type: str | None) -> Content:
    """A coloured one-letter type badge."""
    key = memory_type or "untyped"
    return Content.styled(
        f" {TYPE_BADGES.get(memory_type, TYPE_BADGES[None])} ", f"bold $memory-{key} reverse"
    )


def finding_line(finding: LintFinding, *, with_path: bool = False) -> Content:
    """One lint finding: mark, rule id, message, line number."""
    where = f" (line {finding.line})" if finding.line else ""
    path = f"{finding.path}: " if with_path else ""
    return Content.assemble(
        (f"{SEVERITY_MARKS[finding.severity]} ", f"$lint-{finding.severity}"),
        (finding.rule, f"bold $lint-{finding.severity}"),
        "  ",
        path,
        finding.message,
        (where, "$foreground-muted"),
    )


def frontmatter_value(value: Any) -> str:
    """A frontmatter value on one line, as YAML-ish text rather than a Python repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ", ".join(frontmatter_value(v) for v in value)
    if isinstance(value, dict):  # `metadata: {type: reference}` reads "type: reference"
        return ", ".join(f"{k}: {frontmatter_value(v)}" for k, v in value.items())
    return str(value)


def index_state(document: MemoryDocument) -> str:
    """Whether the index links the memory, and whether that line loads."""
    if not document.entry.indexed:
        return "not in MEMORY.md"
    return "in MEMORY.md, past the cut" if document.past_the_cut else "in MEMORY.md"


class MemoryPane(Pane):
    """Shows one memory file."""

    pane_id = "memory"
    title = "Memory"
    focus_target = ".memory-scroll"
    empty_title = "No memory selected"
    empty_message = "Pick a memory in the tree on the left (↑/↓, Enter), or press n to write one."

    document: reactive[MemoryDocument | None] = reactive(None, init=False, repaint=False)
    """The memory on show (its widgets repaint what changes; the pane draws nothing)."""
    show_source: reactive[bool] = reactive(False, init=False)
    """Show the raw file instead of the rendered markdown."""

    def __init__(
        self,
        *,
        now_ms: Callable[[], float] | None = None,
        lazy_markdown: bool = False,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        # With `lazy_markdown` the body starts as plain text until `enable_markdown()`: the
        # Markdown widget and markdown-it cost ~150 ms to import and lay out, too much for the
        # app's first frame.
        self._markdown_enabled = not lazy_markdown
        self._body_update: AwaitComplete | None = None
        """The Markdown body's latest update (blocks mounted or removed until it is done)."""

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(classes="memory-scroll"):
            yield Static(classes="memory-header")
            yield KeyValueRows(classes="memory-frontmatter")
            yield Static(classes="memory-lints")
            if self._markdown_enabled:
                from textual.widgets import Markdown

                yield Markdown(classes="memory-body")
            else:
                yield Static(classes="memory-body-plain")
            yield Static(classes="memory-source")

    def on_mount(self) -> None:
        self.has_content = self.document is not None
        if self.document is not None:
            self._render_document(self.document)

    def watch_document(
        self, previous: MemoryDocument | None, document: MemoryDocument | None
    ) -> None:
        if document is None:
            self.has_content = False
            return
        self._render_document(document)
        self.has_content = True
        # A re-read of the same file (a rescan, a save) keeps the reader's place.
        if previous is None or previous.entry.path != document.entry.path:
            self.query_one(".memory-scroll", VerticalScroll).scroll_home(animate=False)

    def watch_show_source(self, show_source: bool) -> None:
        self.set_class(show_source, "-source")
        if self.document is not None:
            self._render_body(self.document)

    def show_error(self, path: str, error: str) -> None:
        """Say why a memory could not be shown."""
        self.set_empty(f"Cannot show {path}", error)

    def set_empty(self, title: str, message: str) -> None:
        """Show the empty state, forgetting the memory: shown again later, it is drawn again
        (an equal document set anew would otherwise change nothing)."""
        self.set_reactive(MemoryPane.document, None)
        super().set_empty(title, message)

    # --- rendering ---------------------------------------------------------------------

    def _render_document(self, document: MemoryDocument) -> None:
        entry = document.entry
        days = age_days(entry.mtime_ms, self._now_ms())
        header = Content.assemble(
            badge(entry.type),
            " ",
            (entry.name, "bold"),
            ("  " + entry.path, "$foreground-muted"),
            "\n",
            (
                " · ".join(
                    [
                        entry.type or "no type",
                        SCOPE_LABELS.get(entry.scope, entry.scope),
                        f"changed {age_long(days)}",
                        f"~{entry.tokens:,} tokens",
                        format_file_size(entry.size_bytes),
                        index_state(document),
                    ]
                ),
                "$foreground-muted",
            ),
        )
        if entry.description:
            header = header + Content.assemble("\n", (entry.description, "italic"))
        self.query_one(".memory-header", Static).update(header)
        self._show_frontmatter(document)
        lints = sorted(entry.lints, key=lambda f: (SEVERITY_ORDER[f.severity], f.line or 0))
        lint_widget = self.query_one(".memory-lints", Static)
        lint_widget.update(Content("\n").join(finding_line(f) for f in lints))
        lint_widget.display = bool(lints)
        self._render_body(document)

    def _show_frontmatter(self, document: MemoryDocument) -> None:
        notes: list[Content] = []
        rows: list[tuple[str, str]] = []
        if document.binary:
            notes.append(
                Content.styled("Binary file: Claude Code would read it as garbage.", "$lint-error")
            )
        elif document.frontmatter_error:
            notes.append(
                Content.styled(
                    f"Frontmatter unreadable: {document.frontmatter_error}", "$lint-error"
                )
            )
        elif not document.visible_to_claude:
            notes.append(
                Content.styled(
                    "Claude Code does not see this frontmatter (it must close within 30 lines).",
                    "$lint-warning",
                )
            )
        if not document.binary:
            rows = [
                (str(key), frontmatter_value(value)) for key, value in document.frontmatter.items()
            ]
            if not rows and not notes:
                notes.append(Content.styled("No frontmatter.", "$foreground-muted"))
        self.query_one(".memory-frontmatter", KeyValueRows).set_rows(rows, notes)

    def enable_markdown(self) -> None:
        """Swap the plain body for rendered markdown (called once the first frame is shown)."""
        if self._markdown_enabled:
            return
        self._markdown_enabled = True
        self._import_markdown()

    @work(thread=True, exclusive=True, group="markdown-import")
    def _import_markdown(self) -> None:
        # Importing off the UI thread keeps the screen answering keys meanwhile.
        from textual.widgets import Markdown

        self.post_message(self._MarkdownReady(Markdown))

    class _MarkdownReady(Message):
        """The Markdown widget class finished importing."""

        def __init__(self, widget_class: type[Widget]) -> None:
            super().__init__()
            self.widget_class = widget_class

    async def on_memory_pane__markdown_ready(self, message: _MarkdownReady) -> None:
        message.stop()
        plain = self.query_one(".memory-body-plain", Static)
        await self.query_one(".memory-scroll", VerticalScroll).mount(
            message.widget_class(classes="memory-body"), after=plain
        )
        await plain.remove()
        if self.document is not None:
            self._render_body(self.document)

    def _render_body(self, document: MemoryDocument) -> None:
        source = self.query_one(".memory-source", Static)
        bodies = self.query(".memory-body")
        body = bodies.first() if bodies else self.query_one(".memory-body-plain", Static)
        if self.show_source or document.binary or len(document.body) > MAX_RENDERED_CHARS:
            from textual.highlight import highlight  # pygments: only when source is shown

            text = document.text if not document.binary else "(binary content not shown)"
            source.update(highlight(text[: MAX_RENDERED_CHARS * 2], language="markdown"))
            source.display = True
            body.display = False
        else:
            body.display = True
            source.display = False
            if not bodies:
                body.update(Content(document.body))  # type: ignore[attr-defined]
            elif self._body_update is not None and not self._body_update.is_done:
                # Blocks of the last update are still being mounted or removed; refilled now,
                # they would land after and undo it. The latest memory follows once they are.
                self._render_body_after(self._body_update)
            else:
                update = refill_markdown(body, document.body)
                self._body_update = update or body.update(document.body)  # type: ignore[attr-defined]

    @work(exclusive=True, group="memory-body")
    async def _render_body_after(self, pending: AwaitComplete) -> None:
        await pending
        if self.document is not None:
            self._render_body(self.document)


IN_PLACE_MAX_CHARS = 20_000
"""Bodies up to this size are parsed on the UI thread and poured into the blocks on show;
longer ones go through `Markdown.update` (parsed in a thread, every block mounted anew)."""


def refill_markdown(widget: Widget, text: str) -> AwaitComplete | None:
    """Show `text` in a mounted Markdown widget, keeping the blocks on show where they can
    stay: while the old and the new document have a text block of the same kind (paragraph,
    heading, rule) at the same place, its text is replaced in place; from the first
    difference on, the old blocks are removed and the new ones mounted.

    `Markdown.update` removes every block and mounts new ones: three layout passes and a
    frame each for every cursor move in the tree; kept in place a move costs one. None (and
    nothing done) for a widget that is not Markdown or a body too long to parse here.
    """
    from textual.widgets._markdown import (
        Markdown,
        MarkdownBlock,
        MarkdownHeader,
        MarkdownHorizontalRule,
        MarkdownParagraph,
    )

    if not isinstance(widget, Markdown) or len(text) > IN_PLACE_MAX_CHARS:
        return None
    simple = (MarkdownParagraph, MarkdownHeader, MarkdownHorizontalRule)
    blocks = widget._build_from_source(text)
    shown = list(widget.children)
    kept = 0
    for new, old in zip(blocks, shown, strict=False):
        if type(new) is not type(old) or not isinstance(new, simple) or new._blocks:
            break
        if old.children:
            break
        kept += 1
    widget._markdown = text  # what `Markdown.source` reports
    widget._table_of_contents = None
    for new, old in zip(blocks[:kept], shown[:kept], strict=True):
        assert isinstance(old, MarkdownBlock)  # same type as `new`, checked above
        old.source_range = new.source_range
        old._copy_context(new)
        if new._content != old._content:
            old.set_content(new._content)
    steps: list[Awaitable[object]] = []
    if shown[kept:]:
        steps.append(widget.remove_children(shown[kept:]))
    if blocks[kept:]:
        steps.append(widget.mount_all(blocks[kept:]))
    return AwaitComplete(*steps)
