"""The footer: the focused widget's key bindings drawn as one line by one widget.

Textual's Footer mounts a widget per key and recomposes them all on every bindings change.
At start-up the focus moves and the selection changes within a few frames, and each rebuild
mounted and styled every key again; measured on `workbench demo`, the footer alone added
about 30 ms to the first full paint. Here a change only re-renders one line of text, at most
once per refresh. Keys stay clickable (`@click` links) and keep their theme colours.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import ClassVar, Protocol, runtime_checkable

from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widget import Widget

KEY_GAP = " "
"""Between one key's description and the next key."""


@runtime_checkable
class LabelsItsKeys(Protocol):
    """A node whose key labels depend on its state (a toggle that names where it goes)."""

    def key_label(self, binding: Binding) -> str | None:
        """The label to show for `binding` now, or None for its own."""
        ...


class KeyHints(Widget, can_focus=False):
    """One line of `key description` hints for the bindings active on the screen."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-hints--key",
        "key-hints--description",
        "key-hints--disabled",
    }
    DEFAULT_CSS = """
    KeyHints {
        dock: bottom;
        height: 1;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        color: $footer-foreground;
        background: $footer-background;
        /* Keys are click links: drawn as keys, not as underlined links. */
        link-color: $footer-key-foreground;
        link-background: $footer-key-background;
        link-style: bold;
        link-color-hover: $footer-key-foreground;
        link-background-hover: $block-hover-background;
        link-style-hover: bold;
        & > .key-hints--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-hints--description {
            color: $footer-description-foreground;
            background: $footer-item-background;
        }
        & > .key-hints--disabled {
            text-style: dim;
        }
    }
    """

    def __init__(self, *, show_command_palette: bool = True, id: str | None = None) -> None:  # noqa: A002 - Textual's keyword
        super().__init__(id=id)
        self.show_command_palette = show_command_palette
        self._hints: list[tuple[Binding, str, bool]] = []
        self._palette: tuple[Binding, str, bool] | None = None
        self._update_pending = False
        self._home: Screen[object] | None = None

    def on_mount(self) -> None:
        self._home = home = self.screen
        home.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._collect()

    def on_unmount(self) -> None:
        # The screen may already be gone from the DOM: unsubscribe from the one kept at mount.
        if self._home is not None:
            self._home.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if screen is not self._home or self._update_pending:
            return
        # Bursts of changes (a focus move, a selection) fold into one re-render.
        self._update_pending = True
        self.call_after_refresh(self._collect)

    def _collect(self) -> None:
        self._update_pending = False
        if not self.is_attached or self._home is None:
            return
        active = self._home.active_bindings
        hints: list[tuple[Binding, str, bool]] = []
        seen_actions: set[str] = set()
        palette_key = self.app.COMMAND_PALETTE_BINDING
        palette: tuple[Binding, str, bool] | None = None
        for key, (node, binding, enabled, _tooltip) in active.items():
            if key == palette_key and self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
                palette = (binding, self.app.get_key_display(binding), enabled)
                continue
            # One hint per action, as Textual's footer shows it (the first key bound to it).
            if not binding.show or binding.action in seen_actions:
                continue
            seen_actions.add(binding.action)
            if isinstance(node, LabelsItsKeys) and (label := node.key_label(binding)):
                binding = replace(binding, description=label)
            hints.append((binding, self.app.get_key_display(binding), enabled))
        if hints != self._hints or palette != self._palette:
            self._hints, self._palette = hints, palette
            self.refresh()

    @property
    def hints(self) -> list[tuple[str, str]]:
        """What the footer shows, as (key as displayed, description) pairs, palette last."""
        shown = [(display, binding.description) for binding, display, _ in self._hints]
        if self._palette is not None:
            binding, display, _ = self._palette
            shown.append((display, binding.description))
        return shown

    def action_press_key(self, key: str) -> None:
        """A click on a hint presses its key."""
        self.app.simulate_key(key)

    def _pieces(self, entries: Iterable[tuple[Binding, str, bool]]) -> list[Content]:
        key_style = self.get_visual_style("key-hints--key", partial=True)
        description_style = self.get_visual_style("key-hints--description", partial=True)
        disabled_style = self.get_visual_style("key-hints--disabled", partial=True)
        pieces = []
        for binding, display, enabled in entries:
            click = Style.from_meta({"@click": f"press_key({binding.key!r})"})
            piece = Content.assemble(
                (f" {display} ", key_style + click),
                (f"{binding.description} " if binding.description else "", description_style),
            )
            if not enabled:
                piece = piece.stylize(disabled_style)
            pieces.append(piece)
        return pieces

    def render(self) -> Content:
        left = Content(KEY_GAP).join(self._pieces(self._hints))
        if self._palette is None:
            return left
        right = Content("│").stylize(self.get_visual_style("key-hints--disabled", partial=True))
        right += self._pieces([self._palette])[0]
        room = self.size.width - right.cell_length
        if left.cell_length > room:
            left = left.truncate(max(room - 1, 0), ellipsis=True)
        return left + Content(" " * max(room - left.cell_length, 0)) + right
