"""The review queue: memory writes that extraction and dream proposed, each a diff to decide on.

The queue is read in a thread worker and arrives as `ReviewPane.QueueLoaded`. Accepting writes
through the engine's history (atomic, undoable with u) and is refused when the file changed
since the proposal was made, or when a team memory would carry a secret; nothing is ever
overwritten. Diffs are shown with every secret replaced by `[REDACTED]`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.engine.errors import ConflictError, RefusedWriteError, WorkbenchError
from workbench.ui.actions import ActionSpec
from workbench.ui.formatting import plural
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.panes.base import Pane
from workbench.ui.panes.review_view import (
    Failure,
    detail_content,
    prompt_content,
    summary_content,
)
from workbench.ui.screens.confirm import ConfirmModal
from workbench.ui.widgets.diff_view import DiffView

if TYPE_CHECKING:
    from workbench.engine.agents.models import ReviewItem

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "accept-proposal",
        "a",
        "accept_proposal",
        "Accept",
        "Review: Accept proposal",
        "Write the selected proposal into the memory folder (through history: u in the tree undoes it)",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "reject-proposal",
        "x",
        "reject_proposal",
        "Reject",
        "Review: Reject proposal",
        "Drop the selected proposal; the memory folder is not touched",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "accept-all-proposals",
        "A",
        "accept_all_proposals",
        "Accept all",
        "Review: Accept all proposals",
        "Write every pending proposal, oldest first (asks first; refused ones stay queued)",
        scope="pane",
    ),
    ActionSpec(
        "reject-all-proposals",
        "X",
        "reject_all_proposals",
        "Reject all",
        "Review: Reject all proposals",
        "Drop every pending proposal (asks first)",
        scope="pane",
    ),
    ActionSpec(
        "refresh-proposals",
        "f5",
        "refresh_proposals",
        "Refresh",
        "Review: Refresh queue",
        "Read the review queue again",
        scope="pane",
    ),
)

Verb = Literal["accept", "reject"]


class ReviewPane(Pane):
    """Proposed memory writes with their diffs: accept or reject, one or all."""

    pane_id = "review"
    title = "Review queue"
    focus_target = ".review-list"
    empty_title = "Reading the review queue…"
    empty_message = "Proposed memory writes appear here once the queue has been read."

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]

    DEFAULT_CSS = """
    ReviewPane {
        & .review-summary { padding: 1 0 0 0; }
        & .review-list {
            height: auto; max-height: 10; margin: 1 0 0 0; border: none; padding: 0;
            background: $background; text-wrap: nowrap; text-overflow: ellipsis;
            scrollbar-size-vertical: 1;
            & > .option-list--option-highlighted { background: $boost; }
            &:focus {
                border: none; background-tint: $foreground 0%;
                & > .option-list--option-highlighted {
                    background: $primary-muted; color: $foreground; text-style: none;
                }
            }
        }
        & .review-detail {
            margin: 1 0 0 0; padding: 0 1; border-left: outer $secondary; background: $surface;
            &.-blocked { border-left: outer $warning; }
        }
        & .review-diff { margin: 1 0 0 0; }
    }
    """

    proposals: reactive[tuple[ReviewItem, ...] | None] = reactive(
        None, init=False, bindings=True, always_update=True
    )
    """The queue on show, newest first (None until read). Every read re-renders: refusals the
    queue does not record still change the markers."""
    selected_id: reactive[str | None] = reactive(None, init=False, bindings=True)
    """The proposal under the cursor."""
    busy: reactive[bool] = reactive(False, init=False, bindings=True)
    """A decision is being written."""

    class QueueLoaded(Message):
        """The queue was read."""

        def __init__(self, proposals: tuple[ReviewItem, ...]) -> None:
            super().__init__()
            self.proposals = proposals

    class QueueFailed(Message):
        """The queue could not be read."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class Decided(Message):
        """Proposals were accepted or rejected; some may have been refused."""

        def __init__(self, verb: Verb, done: tuple[str, ...], failed: tuple[Failure, ...]) -> None:
            super().__init__()
            self.verb = verb
            self.done = done
            """Paths of the proposals that were accepted or rejected."""
            self.failed = failed

    def __init__(
        self,
        *,
        proposals: tuple[ReviewItem, ...] | None = None,
        now_ms: Callable[[], float] | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._fed = proposals
        self._loaded = False
        self._failures: dict[str, Failure] = {}
        self._lock = threading.Lock()

    def compose_body(self) -> ComposeResult:
        yield Static(classes="review-summary")
        yield OptionList(classes="review-list")
        yield Static(classes="review-detail")
        yield DiffView(classes="review-diff")

    def on_mount(self) -> None:
        if self._fed is not None:
            self.show_proposals(self._fed)

    def on_show(self) -> None:
        # The queue is read the first time the pane is shown: start-up stays light.
        if self._fed is None and not self._loaded:
            self._loaded = True
            self._load_queue()

    # --- data in -----------------------------------------------------------------------

    def show_proposals(self, proposals: tuple[ReviewItem, ...]) -> None:
        """Show a queue (also how snapshot tests feed the pane)."""
        self.proposals = tuple(proposals)

    def _load_queue(self) -> None:
        engine = self.engine
        self.read_in_thread(
            engine.agents.review_items, self.QueueLoaded, self.QueueFailed, group="review-load"
        )

    @on(QueueLoaded)
    def _queue_loaded(self, message: QueueLoaded) -> None:
        message.stop()
        self.report_engine("review: local queue")
        live = {p.id for p in message.proposals}
        self._failures = {k: v for k, v in self._failures.items() if k in live}
        self.show_proposals(message.proposals)

    @on(QueueFailed)
    def _queue_failed(self, message: QueueFailed) -> None:
        message.stop()
        self.set_empty("Cannot read the review queue", message.error)
        self.notify(message.error, title="Review queue", severity="error")

    # --- rendering ---------------------------------------------------------------------

    def watch_proposals(self, proposals: tuple[ReviewItem, ...] | None) -> None:
        if proposals is None:
            return
        if not proposals:
            self.set_empty(
                "The review queue is empty",
                "When extraction or dream runs without --apply, each memory write it proposes "
                "waits here as a diff. a accepts one (through history: u in the tree undoes it), x "
                "rejects it.\n\nRun `workbench extract` on a session to propose some.",
            )
            self.selected_id = None
            return
        self._render_summary(proposals)
        options = self.query_one(".review-list", OptionList)
        keep = self.selected_id if any(p.id == self.selected_id for p in proposals) else None
        options.set_options(Option(self._prompt(p), id=p.id) for p in proposals)
        keep = keep or proposals[0].id
        options.highlighted = options.get_option_index(keep)
        self.has_content = True
        if keep == self.selected_id:
            self._render_selected()
        else:
            self.selected_id = keep

    def watch_selected_id(self) -> None:
        self._render_selected()

    @on(OptionList.OptionHighlighted, ".review-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.selected_id = event.option.id

    @property
    def selected(self) -> ReviewItem | None:
        """The proposal under the cursor."""
        for proposal in self.proposals or ():
            if proposal.id == self.selected_id:
                return proposal
        return None

    def _render_summary(self, proposals: tuple[ReviewItem, ...]) -> None:
        self.query_one(".review-summary", Static).update(summary_content(proposals))

    def _prompt(self, proposal: ReviewItem) -> Content:
        return prompt_content(proposal, self._failures.get(proposal.id), self._now_ms())

    def _render_selected(self) -> None:
        proposal = self.selected
        detail = self.query_one(".review-detail", Static)
        diff = self.query_one(DiffView)
        if proposal is None:
            detail.update("")
            diff.set_diff("")
            return
        detail.update(self._detail(proposal))
        failure = self._failures.get(proposal.id)
        detail.set_class(bool(proposal.changed_since or proposal.refusal or failure), "-blocked")
        diff.set_diff(proposal.diff)

    def _detail(self, proposal: ReviewItem) -> Content:
        return detail_content(proposal, self._failures.get(proposal.id), self._now_ms())

    # --- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("accept_proposal", "reject_proposal"):
            return True if (self.selected is not None and not self.busy) else None
        if action in ("accept_all_proposals", "reject_all_proposals"):
            return True if (self.proposals and not self.busy) else None
        return True

    def action_refresh_proposals(self) -> None:
        """Read the queue again."""
        self._loaded = True
        self._load_queue()

    def action_accept_proposal(self) -> None:
        """Accept the selected proposal."""
        if self.selected is not None and not self.busy:
            self._decide("accept", (self.selected.id,))

    def action_reject_proposal(self) -> None:
        """Reject the selected proposal."""
        if self.selected is not None and not self.busy:
            self._decide("reject", (self.selected.id,))

    @work(exclusive=True, group="review-ask")
    async def action_accept_all_proposals(self) -> None:
        """Accept every proposal, oldest first, after asking."""
        proposals = self.proposals or ()
        if not proposals or self.busy:
            return
        if len(proposals) > 1:
            confirmed = await self.app.push_screen_wait(
                ConfirmModal(
                    f"Accept all {len(proposals)} proposals?",
                    "Each is written through history (u undoes them one run at a time). "
                    "Proposals whose file changed since, or that would put a secret in team "
                    "memory, are refused and stay in the queue.",
                    confirm_label="Accept all",
                )
            )
            if not confirmed:
                return
        self._decide("accept", tuple(p.id for p in reversed(proposals)))

    @work(exclusive=True, group="review-ask")
    async def action_reject_all_proposals(self) -> None:
        """Reject every proposal, after asking."""
        proposals = self.proposals or ()
        if not proposals or self.busy:
            return
        confirmed = await self.app.push_screen_wait(
            ConfirmModal(
                f"Reject all {plural(len(proposals), 'proposal')}?",
                "They are dropped for good; the memory folder is not touched.",
                confirm_label="Reject all",
            )
        )
        if confirmed:
            self._decide("reject", tuple(p.id for p in reversed(proposals)))

    def _decide(self, verb: Verb, ids: tuple[str, ...]) -> None:
        self.busy = True
        paths = {p.id: p.path for p in self.proposals or ()}
        self._run_decision(verb, ids, paths)

    @work(thread=True, group="review-decide", exit_on_error=False)
    def _run_decision(self, verb: Verb, ids: tuple[str, ...], paths: dict[str, str]) -> None:
        engine = self.engine
        queue = engine.agents.review
        done: list[str] = []
        failed: list[Failure] = []
        # One decision at a time: two accepts of the same run would race on MEMORY.md.
        with self._lock:
            for proposal_id in ids:
                path = paths.get(proposal_id, proposal_id)
                try:
                    if verb == "accept":
                        done.append(queue.accept(proposal_id).proposal.path)
                    else:
                        done.append(queue.reject(proposal_id).path)
                except ConflictError as exc:
                    failed.append(Failure(proposal_id, path, "changed", str(exc)))
                except RefusedWriteError as exc:
                    failed.append(Failure(proposal_id, path, "secret", str(exc)))
                except (WorkbenchError, OSError) as exc:
                    failed.append(Failure(proposal_id, path, "error", str(exc)))
        self.post_message(self.Decided(verb, tuple(done), tuple(failed)))

    @on(Decided)
    def _decided(self, message: Decided) -> None:
        message.stop()
        self.busy = False
        for failure in message.failed:
            self._failures[failure.id] = failure
        done = message.done
        if done and message.verb == "accept":
            summary = (
                f"accepted the proposed {done[0]}"
                if len(done) == 1
                else f"accepted {len(done)} proposals ({', '.join(done[:4])}"
                + (", …)" if len(done) > 4 else ")")
            )
            # The main screen reports it (with the undo hint) and re-scans the memory folder.
            self.post_message(
                ChangeApplied(ChangeOutcome(summary, select=done[0] if len(done) == 1 else None))
            )
        elif done:
            self.notify(
                f"Rejected {done[0]}" if len(done) == 1 else f"Rejected {len(done)} proposals",
                title="Review queue",
            )
        for failure in message.failed:
            title = {
                "changed": f"Not accepted: {failure.path} changed since",
                "secret": f"Not accepted: {failure.path} would hold a secret",
                "error": f"Could not {message.verb} {failure.path}",
            }[failure.reason]
            self.notify(failure.message, title=title, severity="error", timeout=12)
        self._load_queue()
