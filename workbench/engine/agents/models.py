"""View models of the agents area: what the Review pane and `workbench review list` show, and
the short description of a model request the agent commands print."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.agents.review_queue import Proposal


@dataclass(frozen=True)
class ReviewItem:
    """One proposal as the front ends show it: never its raw content, secrets redacted, and
    checked against the file as it is now."""

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
    abs_path: str = ""
    base_sha256: str | None = None
    unindexed: bool = False
    """A new memory that no index line links to, now or in a queued index edit: accepted
    alone, it is not in the MEMORY.md Claude Code loads (recall can still pick it)."""

    @property
    def blocked(self) -> bool:
        """Accepting it as it is would be refused."""
        return self.changed_since or self.refusal is not None

    @classmethod
    def from_proposal(
        cls,
        proposal: Proposal,
        *,
        redact: Callable[[str], tuple[str, int]] | None = None,
        changed_since: bool = False,
        refusal: str | None = None,
        unindexed: bool = False,
    ) -> ReviewItem:
        """Build the item; `redact` maps text to (redacted text, secrets replaced)."""
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
            abs_path=proposal.abs_path,
            base_sha256=proposal.base_sha256,
            unindexed=unindexed,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "source": self.source,
            "path": self.path,
            "abs_path": self.abs_path,
            "scope": self.scope,
            "kind": self.kind,
            "base_sha256": self.base_sha256,
            "added_lines": self.added,
            "removed_lines": self.removed,
            "note": self.note,
            "group": self.group,
            "diff": self.diff,
            "hidden_secrets": self.hidden_secrets,
            "changed_since": self.changed_since,
            "secret_refusal": self.refusal,
            "unindexed": self.unindexed,
        }


def request_summary(request: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A short description of a request for people (the full body is in the JSON)."""
    if not request:
        return None
    messages = request.get("messages") or []
    last = messages[-1]["content"] if messages else []
    prompt = last if isinstance(last, str) else ""
    if isinstance(last, list) and last and isinstance(last[-1], dict):
        prompt = str(last[-1].get("text", ""))
    return {
        "model": request.get("model"),
        "max_tokens": request.get("max_tokens"),
        "system_chars": len(str(request.get("system", ""))),
        "messages": len(messages),
        "tools": [t.get("name") for t in request.get("tools") or []],
        "prompt": prompt,
        "bytes": len(json.dumps(request, ensure_ascii=False).encode("utf-8")),
    }
