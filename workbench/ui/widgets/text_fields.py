"""Text boxes that take every key in the order it was typed.

Textual runs a printable key in the focused box at once, but one of the box's own bindings
(End, Home, the arrows, PageUp, PageDown, ...) only after the key has bubbled back up to the
App, one queued message per parent on the way. Typed in one burst (a fast typist, a paste of
keys, `tmux send-keys`), `End` then ` QQ` put "QQ" where the cursor was and moved it to the
end afterwards; after the editor's Tab, which moves the focus first so what follows lands in
the next field, it looked as if the End had been dropped.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input, TextArea


async def run_own_binding(box: Widget, event: events.Key) -> None:
    """Run the box's own binding for `event` now, where the key reached it, not after it
    bubbled up, so it keeps its place among the typed text. Bindings of the screen or the
    app (save, cancel, ...) still run the usual way."""
    if box.check_consume_key(event.key, event.character):
        return  # text (and Enter in a text area): the box's own handler, as before
    # The box's own map, not the screen's active bindings: those follow the focus, which a
    # Tab later in the same burst has already moved on. Textual's own bindings carry no
    # binding id, so the keymap (applied by id) never changes them.
    for binding in box._bindings.key_to_bindings.get(event.key, ()):
        if not binding.priority and await box.app.run_action(binding.action, box):
            event.stop()  # handled here: bubbling up would run it a second time
            return


# Textual calls every class's `_on_key` along the MRO, so these run before the box's own.
class FieldInput(Input):
    """An `Input` whose cursor keys keep their place among the typed text."""

    async def _on_key(self, event: events.Key) -> None:
        await run_own_binding(self, event)


class FieldTextArea(TextArea):
    """A `TextArea` whose cursor keys keep their place among the typed text."""

    async def _on_key(self, event: events.Key) -> None:
        await run_own_binding(self, event)
