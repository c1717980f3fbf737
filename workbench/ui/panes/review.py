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
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from workbench.engine.errors import ConflictError, RefusedWriteError, WorkbenchError
from workbench.ui.actions import ActionSpec
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.panes.base import Pane
from workbench.ui.screens.confirm import ConfirmModal
from workbench.ui.widgets.diff_view import DiffView

if TYPE_CHECKING:
    from workbench.engine import Engine
    from workbench.engine.agents.review_queue import Proposal

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "accept-proposal",
        "a",
        "accept_proposal",
        "Accept",
        "Review: Accept proposal",
        "Write the selected proposal into the memory folder (through history, so u undoes it)",
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


@dataclass(frozen=True)
class ProposalView:
    """What the pane shows of one proposal: never its raw content, and secrets redacted."""

    id: str
    created: str
    source: str
    path: str
    scope: str
    kind: str
    added: int
    removed: int
    diff: str
    """The unified diff with every secret replaced by `[REDACTED]`."""
    hidden_secrets: int = 0
    """How many secrets the redaction replaced in the diff."""
    note: str = ""
    group: str = ""
    changed_since: bool = False
    """The target file no longer matches the base the proposal was made against."""
    refusal: str | None = None
    """The secret guard's refusal, for a team memory that would hold a credential."""

    @classmethod
    def from_proposal(
        cls,
        proposal: Proposal,
        *,
        redact: Callable[[str], tuple[str, int]] | None = None,
        changed_since: bool = False,
        refusal: str | None = None,
    ) -> ProposalView:
        """Build the view; `redact` maps text to (redacted text, secrets replaced)."""
        if redact is None:
            from workbench.engine.team.secrets.redaction import redact as redact_text

            def redact(text: str) -> tuple[str, int]:
                result = redact_text(text)
                return result.text, result.count

        diff, hidden = redact(proposal.diff)
        added, removed = proposal.diff_stats()
        return cls(
            id=proposal.id,
            created=proposal.created,
            source=proposal.source,
            path=proposal.path,
            scope=proposal.scope,
            kind=proposal.kind,
            added=added,
            removed=removed,
            diff=diff,
            hidden_secrets=hidden,
            note=proposal.note,
            group=proposal.group,
            changed_since=changed_since,
            refusal=refusal,
        )


def load_queue(engine: Engine) -> tuple[ProposalView, ...]:
    """Every pending proposal, newest first, checked against the files as they are now."""
    from workbench.engine.agents.review_queue import sha256_or_none, team_secret_refusal
    from workbench.engine.userfiles import MEMORY_FILE_LIMIT, read_bytes

    def redact(text: str) -> tuple[str, int]:
        result = engine.team.redact_text(text)
        return result.text, result.count

    views = []
    for proposal in engine.agents.review.list():
        try:
            current: bytes | None = read_bytes(proposal.abs_path, MEMORY_FILE_LIMIT, "a memory")
        except FileNotFoundError:
            current = None
        except OSError:
            current = b""  # unreadable: accepting would fail too
        refusal = None
        if proposal.scope == "team":
            refusal = team_secret_refusal(engine, proposal.abs_path, proposal.content)
        views.append(
            ProposalView.from_proposal(
                proposal,
                redact=redact,
                changed_since=sha256_or_none(current) != proposal.base_sha256,
                refusal=refusal,
            )
        )
    return tuple(views)


def age_text(iso: str, now_ms: float) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago` for an ISO time."""
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return iso
    minutes = max(0, int((now_ms - then) // 60_000))
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // 1440} days ago"


def plural(count: int, noun: str) -> str:
    """`1 proposal`, `3 proposals`, `2 entries`."""
    if count == 1:
        return f"1 {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{count} {noun[:-1]}ies"
    return f"{count} {noun}s"


@dataclass(frozen=True)
class Failure:
    """A proposal the engine refused to accept, and why."""

    id: str
    path: str
    reason: Literal["changed", "secret", "error"]
    message: str


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

    proposals: reactive[tuple[ProposalView, ...] | None] = reactive(
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

        def __init__(self, proposals: tuple[ProposalView, ...]) -> None:
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
        proposals: tuple[ProposalView, ...] | None = None,
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

    def show_proposals(self, proposals: tuple[ProposalView, ...]) -> None:
        """Show a queue (also how snapshot tests feed the pane)."""
        self.proposals = tuple(proposals)

    @work(thread=True, exclusive=True, group="review-load", exit_on_error=False)
    def _load_queue(self) -> None:
        engine: Engine = self.app.engine  # type: ignore[attr-defined]
        try:
            proposals = load_queue(engine)
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.QueueFailed(str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.QueueLoaded(proposals))

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

    def watch_proposals(self, proposals: tuple[ProposalView, ...] | None) -> None:
        if proposals is None:
            return
        if not proposals:
            self.set_empty(
                "The review queue is empty",
                "When extraction or dream runs without --apply, each memory write it proposes "
                "waits here as a diff. a accepts one (through history, so u undoes it), x "
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
    def selected(self) -> ProposalView | None:
        """The proposal under the cursor."""
        for proposal in self.proposals or ():
            if proposal.id == self.selected_id:
                return proposal
        return None

    def _render_summary(self, proposals: tuple[ProposalView, ...]) -> None:
        sources: dict[str, int] = {}
        for proposal in proposals:
            sources[proposal.source] = sources.get(proposal.source, 0) + 1
        by_source = " · ".join(f"{count} from {source}" for source, count in sources.items())
        blocked = sum(1 for p in proposals if p.changed_since or p.refusal)
        self.query_one(".review-summary", Static).update(
            Content.assemble(
                (plural(len(proposals), "proposal"), "bold"),
                " waiting",
                ("  ·  " + by_source, "$foreground-muted"),
                (f"  ·  {blocked} cannot be accepted as is", "$text-warning") if blocked else "",
            )
        )

    def _prompt(self, proposal: ProposalView) -> Content:
        badge = (" new ", "bold $text-success reverse") if proposal.kind == "create" else None
        if proposal.kind == "delete":
            badge = (" del ", "bold $text-error reverse")
        badge = badge or (" edit", "bold $text-primary reverse")
        parts: list[Content | tuple[str, str] | str] = [
            badge,
            " ",
            (f"+{proposal.added}", "$text-success"),
            " ",
            (f"−{proposal.removed}", "$text-error"),
            "  ",
            (proposal.path, "bold"),
        ]
        if proposal.scope == "team":
            parts += ["  ", ("team", "$text-accent")]
        failure = self._failures.get(proposal.id)
        if proposal.changed_since or (failure and failure.reason == "changed"):
            parts += ["  ", ("▲ changed since", "$text-warning")]
        if proposal.refusal or (failure and failure.reason == "secret"):
            parts += ["  ", ("✖ holds a secret", "$text-error")]
        parts.append(
            (
                f"  {proposal.source} · {age_text(proposal.created, self._now_ms())}",
                "$foreground-muted",
            )
        )
        return Content.assemble(*parts)

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

    def _detail(self, proposal: ProposalView) -> Content:
        what = {"create": "a new file", "delete": "the removal of a file"}.get(
            proposal.kind, "an edit of an existing file"
        )
        where = (
            "team memory: it syncs to every teammate on the next push"
            if proposal.scope == "team"
            else {"log": "a daily log", "private": "private memory (this machine only)"}.get(
                proposal.scope, proposal.scope
            )
        )
        lines = [
            Content.assemble(
                ("→ ", "$foreground-muted"),
                (proposal.path, "bold"),
                ("  ", ""),
                (where, "$text-accent" if proposal.scope == "team" else "$foreground-muted"),
            ),
            Content.styled(
                f"{what} (+{proposal.added} −{proposal.removed}), proposed by {proposal.source} "
                f"{age_text(proposal.created, self._now_ms())}",
                "$foreground-muted",
            ),
        ]
        if proposal.note:
            lines.append(Content.styled(proposal.note, "italic"))
        failure = self._failures.get(proposal.id)
        if proposal.changed_since or (failure and failure.reason == "changed"):
            lines.append(
                Content.styled(
                    "▲ The file changed after this was proposed: accepting is refused so "
                    "nothing is overwritten. Reject it (x) and run the agent again.",
                    "$text-warning",
                )
            )
        if proposal.refusal:
            lines.append(Content.styled(f"✖ {proposal.refusal}", "$text-error"))
        if failure and failure.reason == "error":
            lines.append(Content.styled(f"✖ {failure.message}", "$text-error"))
        if proposal.hidden_secrets:
            lines.append(
                Content.styled(
                    f"{plural(proposal.hidden_secrets, 'secret')} in this diff shown as [REDACTED]",
                    "$text-warning",
                )
            )
        return Content("\n").join(lines)

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
        engine: Engine = self.app.engine  # type: ignore[attr-defined]
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
