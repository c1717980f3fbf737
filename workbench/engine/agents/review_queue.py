"""The review queue: memory writes an agent proposed, kept as diffs until a person decides.

Each proposal is one JSON file under `<WORKBENCH_HOME>/proposals/<project key>/`, holding the
target path, the new content, a unified diff against the file as it was when the proposal was
made, and the hash of that base. Accepting writes through the local history (atomic and
undoable) and is refused when the file changed since: the diff the user approved would no
longer describe what happens. Team-memory proposals pass the secret guard again on accept.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.agents.permissions import path_inside_folder
from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    PathTraversalError,
    RefusedWriteError,
    UserInputError,
)
from workbench.engine.jsutil import js_iso
from workbench.engine.memories.index import linked_paths
from workbench.engine.shown_text import shown
from workbench.engine.userfiles import MEMORY_FILE_LIMIT, load_json, read_bytes

if TYPE_CHECKING:
    from workbench.engine.agents.models import ReviewItem
    from workbench.engine.agents.tools import StagedFile
    from workbench.engine.engine import Engine
    from workbench.engine.history import History, HistoryEntry

APPLY_ACTION = "extraction-apply"


def sha256_or_none(data: bytes | None) -> str | None:
    """The hex sha256 of `data`, or None for a file that does not exist."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def unified_diff(before: str | None, after: str, rel_path: str) -> str:
    """A unified diff from the current file (or nothing) to the proposed text."""
    old_lines = [] if before is None else before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    diff = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile="/dev/null" if before is None else f"a/{rel_path}",
        tofile=f"b/{rel_path}",
    )
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass(frozen=True)
class Proposal:
    """One proposed write to one memory file."""

    id: str
    created: str
    source: str
    """What proposed it: `extract` or `dream`."""
    abs_path: str
    path: str
    """Relative to the memory folder, `/`-separated."""
    scope: str
    """`private`, `team` or `log`."""
    base_sha256: str | None
    """Hash of the file when the proposal was made; None when it did not exist."""
    content: str
    diff: str
    note: str = ""
    group: str = ""
    """Proposals from one run share a group."""
    delete: bool = False
    """The proposal removes the file (`content` is empty)."""

    @property
    def kind(self) -> str:
        if self.delete:
            return "delete"
        return "create" if self.base_sha256 is None else "modify"

    def diff_stats(self) -> tuple[int, int]:
        """Lines added and removed."""
        added = removed = 0
        for line in self.diff.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed

    def to_json(self, *, with_content: bool = False) -> dict[str, Any]:
        added, removed = self.diff_stats()
        data: dict[str, Any] = {
            "id": self.id,
            "created": self.created,
            "source": self.source,
            "path": self.path,
            "abs_path": self.abs_path,
            "scope": self.scope,
            "kind": self.kind,
            "base_sha256": self.base_sha256,
            "added_lines": added,
            "removed_lines": removed,
            "note": self.note,
            "group": self.group,
            # What is printed and put in JSON never carries a credential; accepting writes
            # `content` itself.
            "diff": shown(self.diff),
        }
        if with_content:
            data["content"] = shown(self.content)
        return data


@dataclass(frozen=True)
class AcceptResult:
    """A proposal that reached the memory folder."""

    proposal: Proposal
    history_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "accepted": self.proposal.id,
            "path": self.proposal.path,
            "abs_path": self.proposal.abs_path,
            "kind": self.proposal.kind,
            "history_id": self.history_id,
        }


class ReviewQueue:
    """Pending proposals for one memory folder."""

    def __init__(
        self, engine: Engine, folder: Path | None = None, *, history: History | None = None
    ) -> None:
        self.engine = engine
        self.history = engine.history if history is None else history
        """Where accepted proposals are recorded (the agents service passes the facade's)."""
        self._folder = folder

    @property
    def folder(self) -> Path:
        """`<WORKBENCH_HOME>/proposals/<project key>/`, created private on first use."""
        if self._folder is None:
            from workbench.paths import state_dir

            self._folder = state_dir("proposals", self.history.folder.name)
        return self._folder

    # --- making proposals -------------------------------------------------------------------

    def propose(
        self, files: Iterable[StagedFile], *, source: str, note: str = "", group: str = ""
    ) -> list[Proposal]:
        """Queue every changed staged file as a proposal (nothing in the memory folder moves)."""
        made = []
        group = group or secrets.token_hex(4)
        for staged in files:
            if not staged.changed:
                continue
            made.append(self._store(self._make(staged, source=source, note=note, group=group)))
        return made

    def propose_delete(
        self, path: str, *, source: str, note: str = "", group: str = ""
    ) -> Proposal:
        """Queue the removal of one file; accepting it deletes through history."""
        self._check_target(path)
        try:
            current = read_bytes(path, MEMORY_FILE_LIMIT, "a memory file")
        except FileNotFoundError:
            raise NotFoundError(f"no file {self.engine.locations.relative(path)}") from None
        rel = self.engine.locations.relative(path)
        before = current.decode("utf-8", "replace")
        proposal = Proposal(
            id=f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}",
            created=js_iso(time.time() * 1000),
            source=source,
            abs_path=path,
            path=rel,
            scope=self._scope(rel),
            base_sha256=sha256_or_none(current),
            content="",
            diff=_removal_diff(before, rel),
            note=note,
            group=group or secrets.token_hex(4),
            delete=True,
        )
        return self._store(proposal)

    def _make(self, staged: StagedFile, *, source: str, note: str, group: str) -> Proposal:
        self._check_target(staged.path)
        rel = self.engine.locations.relative(staged.path)
        before = None if staged.original is None else staged.original.decode("utf-8", "replace")
        return Proposal(
            id=f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}",
            created=js_iso(time.time() * 1000),
            source=source,
            abs_path=staged.path,
            path=rel,
            scope=self._scope(rel),
            base_sha256=sha256_or_none(staged.original),
            content=staged.content,
            diff=unified_diff(before, staged.content, rel),
            note=note,
            group=group,
        )

    def _store(self, proposal: Proposal) -> Proposal:
        data = json.dumps(asdict(proposal), ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write_bytes(self.folder / f"{proposal.id}.json", data, mode=0o600)
        return proposal

    def _scope(self, rel: str) -> str:
        if rel.startswith("team/"):
            return "team"
        if rel.startswith("logs/"):
            return "log"
        return "private"

    # --- reading -----------------------------------------------------------------------------

    def list(self) -> list[Proposal]:
        """Pending proposals, newest first; unreadable files are skipped."""
        try:
            paths = sorted(self.folder.glob("*.json"))
        except OSError:
            return []
        out = []
        for path in paths:
            proposal = _load(path)
            if proposal is not None:
                out.append(proposal)
        out.sort(key=lambda p: (p.created, p.id), reverse=True)
        return out

    def get(self, proposal_id: str) -> Proposal:
        """The proposal with this id (a unique prefix is enough)."""
        if not proposal_id or not all(c.isalnum() or c == "-" for c in proposal_id):
            raise UserInputError(f"not a proposal id: {proposal_id!r}")
        matches = [p for p in self.list() if p.id.startswith(proposal_id)]
        exact = [p for p in matches if p.id == proposal_id]
        if exact:
            return exact[0]
        if not matches:
            raise NotFoundError(
                f"no pending proposal {proposal_id!r} (see `workbench review list`)"
            )
        if len(matches) > 1:
            raise UserInputError(f"proposal id {proposal_id!r} is ambiguous; give more characters")
        return matches[0]

    # --- deciding ----------------------------------------------------------------------------

    def accept(self, proposal_id: str) -> AcceptResult:
        """Write the proposal through history; refused if the file changed since.

        The proposal is looked up, the file checked and written, and the proposal removed, all
        under the memory folder's lock: no other writer (a save, a second accept of the same
        proposal) can slip a change in between the check and the write.
        """
        first = self.get(proposal_id)
        if not first.delete:
            self.check_team_secrets(first.abs_path, first.content)  # before any lock file
        with self.history.locked():
            proposal = self.get(first.id)
            note = f"proposal {proposal.id} ({proposal.source})"
            if proposal.delete:
                entry = self._delete_checked(proposal, note=note)
            else:
                entry = self.write_checked(
                    proposal.abs_path,
                    proposal.content,
                    proposal.base_sha256,
                    note=note,
                    group=proposal.group,
                )
            self._discard(proposal)
        return AcceptResult(proposal, entry.id)

    def _delete_checked(self, proposal: Proposal, *, note: str) -> HistoryEntry:
        """Delete the file of a delete proposal, refused when it changed since."""
        self._check_target(proposal.abs_path)
        with self.history.locked():  # the check and the delete as one step
            try:
                current: bytes | None = read_bytes(
                    proposal.abs_path, MEMORY_FILE_LIMIT, "a memory file"
                )
            except FileNotFoundError:
                current = None
            if current is None or sha256_or_none(current) != proposal.base_sha256:
                raise ConflictError(
                    f"{proposal.path} changed after the deletion was proposed; nothing was "
                    "deleted (reject it and propose again)"
                )
            return self.history.delete(
                proposal.abs_path, APPLY_ACTION, note=note, group=proposal.group
            )

    def reject(self, proposal_id: str) -> Proposal:
        """Drop a proposal without touching the memory folder."""
        proposal = self.get(proposal_id)
        self._discard(proposal)
        return proposal

    def write_checked(
        self,
        path: str,
        content: str,
        base_sha256: str | None,
        *,
        note: str = "",
        group: str = "",
    ) -> HistoryEntry:
        """Write one agent-made file: inside the folder, unchanged since read, no team secrets."""
        self._check_target(path)
        self.check_team_secrets(path, content)  # content only: refused before any lock file
        with self.history.locked():  # the check and the write as one step
            try:
                current: bytes | None = read_bytes(path, MEMORY_FILE_LIMIT, "a memory file")
            except FileNotFoundError:
                current = None
            if sha256_or_none(current) != base_sha256:
                raise ConflictError(
                    f"{self.engine.locations.relative(path)} changed after the agent read it; "
                    "the proposed change was not written (reject it and run the agent again)"
                )
            data = content.encode("utf-8")
            return self.history.write(path, data, APPLY_ACTION, note=note, group=group)

    def check_team_secrets(self, path: str, content: str) -> None:
        """Refuse team-memory content that holds a credential (labels only, never the text)."""
        refusal = team_secret_refusal(self.engine, path, content)
        if refusal:
            raise RefusedWriteError(refusal)

    def _check_target(self, path: str) -> None:
        if not path_inside_folder(path, self.engine.locations.memory_dir):
            raise PathTraversalError(
                f"{path} is outside the memory folder; agents may only write inside it"
            )

    def _discard(self, proposal: Proposal) -> None:
        try:
            os.unlink(self.folder / f"{proposal.id}.json")
        except FileNotFoundError:
            pass


def _removal_diff(before: str, rel_path: str) -> str:
    lines = before.splitlines(keepends=True)
    diff = difflib.unified_diff(lines, [], fromfile=f"a/{rel_path}", tofile="/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff)


def team_secret_refusal(engine: Engine, path: str, content: str) -> str | None:
    """The refusal message when `path` is team memory and `content` holds a secret."""
    if not engine.locations.is_team_path(path):
        return None  # keeps the scanner unloaded for private memories
    from workbench.engine.team.secrets import check_team_mem_secrets

    return check_team_mem_secrets(path, content, engine.locations)


def review_items(
    queue: ReviewQueue, redact: Callable[[str], tuple[str, int]]
) -> tuple[ReviewItem, ...]:
    """The queue's proposals as front ends show them (see `ReviewItem`)."""
    from workbench.engine.agents.models import ReviewItem

    items = []
    proposals = queue.list()
    linked = _linked_after(queue, proposals)
    for proposal in proposals:
        try:
            current: bytes | None = read_bytes(
                proposal.abs_path, MEMORY_FILE_LIMIT, "a memory file"
            )
        except FileNotFoundError:
            current = None
        except OSError:
            current = b""  # unreadable: accepting would fail too
        refusal = None
        if proposal.scope == "team":
            refusal = team_secret_refusal(queue.engine, proposal.abs_path, proposal.content)
        items.append(
            ReviewItem.from_proposal(
                proposal,
                redact=redact,
                changed_since=sha256_or_none(current) != proposal.base_sha256,
                refusal=refusal,
                unindexed=_is_memory(proposal) and proposal.path not in linked,
            )
        )
    return tuple(items)


def _is_memory(proposal: Proposal) -> bool:
    """A new memory file (not an index, not a daily log), the kind an index line points at."""
    return (
        proposal.kind == "create"
        and proposal.scope in ("private", "team")
        and Path(proposal.path).name != "MEMORY.md"
    )


def _linked_after(queue: ReviewQueue, proposals: Sequence[Proposal]) -> frozenset[str]:
    """The memory paths an index links to now, or would once a queued index edit is accepted
    (a new memory and the line pointing at it are proposed as two writes)."""
    if not any(_is_memory(p) for p in proposals):
        return frozenset()
    linked = set(queue.engine.memories.indexed_paths())
    for proposal in proposals:
        if Path(proposal.path).name == "MEMORY.md" and not proposal.delete:
            linked |= linked_paths(proposal.content, "team/" if proposal.scope == "team" else "")
    return frozenset(linked)


PROPOSAL_LIMIT = 8 * MEMORY_FILE_LIMIT
"""A proposal holds a memory file's whole content and its diff, JSON-escaped: a file up to
the memory-file limit must stay readable once queued."""


def _load(path: Path) -> Proposal | None:
    try:
        data = load_json(read_bytes(path, PROPOSAL_LIMIT, "a proposal"), str(path))
        return Proposal(**data)
    except (OSError, ValueError, TypeError, UserInputError):
        return None
