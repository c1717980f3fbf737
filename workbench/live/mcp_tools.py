"""What the MCP server's tools do, over the engine facade, without the `mcp` SDK.

Each method takes plain arguments and returns a JSON-ready dict, so the tools can be tested
and reused without a server. Writes go through the store (atomic, conflict-checked,
recorded in history, undoable) when the server runs with `--allow-writes`; otherwise they
become proposals in the review queue, for a person to accept or reject. Team writes pass the
secret guard either way, and every result is passed through the secret redactor: a
credential in a private memory never comes back to the model.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    RefusedWriteError,
    UserInputError,
)
from workbench.engine.userfiles import INDEX_LIMIT, MEMORY_FILE_LIMIT, read_bytes, read_text

if TYPE_CHECKING:
    from workbench.engine import Engine
    from workbench.engine.recall.models import EngineChoice

SOURCE = "mcp"
"""How proposals made through the MCP server are labelled in the review queue."""
RESOURCE_PREFIX = "workbench://memory/"
OPAQUE_PREFIX = "workbench://memory-id/"
"""The resources of memory files whose path holds a secret: `memory-id/<sha256 of the path>`."""
MAX_SEARCH_RESULTS = 50
MAX_FACTS_SHOWN = 20
_SNIPPET_WIDTH = 160


def _redactor() -> Callable[[str], str]:
    from workbench.engine.team.secrets.redaction import redact_secrets

    return redact_secrets


def scrub(value: Any, redact: Callable[[str], str] | None = None) -> Any:
    """`value` with every string passed through the secret redactor."""
    redact = redact or _redactor()
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: scrub(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, redact) for v in value]
    return value


def resource_uri(rel_path: str) -> str:
    """`workbench://memory/<path>` for a path relative to the memory folder.

    A path that holds a secret would carry it in the URI, so it gets an opaque URI instead,
    `workbench://memory-id/<hash of the path>`, which `MemoryTools.read_resource` resolves
    by listing the folder (the hash is one way; the secret is not recoverable from it).
    """
    if _redactor()(rel_path) != rel_path:
        return OPAQUE_PREFIX + _path_hash(rel_path)
    return RESOURCE_PREFIX + quote(rel_path, safe="/")


def _path_hash(rel_path: str) -> str:
    import hashlib

    return hashlib.sha256(rel_path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def is_resource_uri(uri: str) -> bool:
    return uri.startswith((RESOURCE_PREFIX, OPAQUE_PREFIX))


def path_from_uri(uri: str) -> str:
    if not uri.startswith(RESOURCE_PREFIX):
        raise NotFoundError(f"not a memory resource: {_redactor()(uri)}")
    return unquote(uri[len(RESOURCE_PREFIX) :])


@dataclass(frozen=True)
class ResourceInfo:
    uri: str
    name: str
    description: str


class MemoryTools:
    """The tools of one MCP server, over one engine; calls are serialised."""

    def __init__(self, engine: Engine, *, allow_writes: bool = False) -> None:
        self.engine = engine
        self.allow_writes = allow_writes
        self.lock = threading.RLock()

    # --- reading ----------------------------------------------------------------------

    async def recall(
        self,
        query: str,
        *,
        engine: str = "auto",
        recent_tools: Sequence[str] = (),
        surfaced: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Claude Code's recall for `query`: the selection with reasons and what is injected."""
        if not query.strip():
            raise UserInputError("give a query to recall for")
        choice = _engine_choice(engine)
        if choice == "llm" and not self.engine.env.get("ANTHROPIC_API_KEY"):
            raise UserInputError("engine llm needs ANTHROPIC_API_KEY; use auto or offline")
        result = await self.engine.recall.recall(
            query, engine=choice, recent_tools=list(recent_tools), surfaced=list(surfaced)
        )
        data = result.to_json()
        out = {
            "query": data["query"],
            "engine": data["engine"],
            "engine_note": (
                "chosen by the model (ANTHROPIC_API_KEY is set)"
                if data["engine"] == "llm"
                else "chosen by the offline ranker (no model call)"
            ),
            "candidate_count": data["candidate_count"],
            "selected": data["selected"],
            "near_misses": data["near_misses"],
            "notes": data["notes"],
            "error": data["error"],
            "injected": data["surfacing"],
        }
        return scrub(out)

    def search(self, query: str, *, scope: str = "all", limit: int = 20) -> dict[str, Any]:
        """Every memory whose name, description or text holds all the query's words."""
        words = [w.lower() for w in re.findall(r"\S+", query)]
        if not words:
            raise UserInputError("give at least one word to search for")
        limit = max(1, min(limit, MAX_SEARCH_RESULTS))
        hits = []
        with self.lock:
            entries = self.engine.memories.list(scope)
            for entry in entries:
                try:
                    text = read_text(
                        entry.abs_path, MEMORY_FILE_LIMIT, "a memory file", universal_newlines=True
                    )
                except OSError:
                    continue
                haystack = f"{entry.name}\n{entry.description or ''}\n{text}".lower()
                if not all(w in haystack for w in words):
                    continue
                score = sum(haystack.count(w) for w in words)
                score += sum(3 for w in words if w in f"{entry.name} {entry.description}".lower())
                hits.append((score, entry, _snippets(text, words)))
        hits.sort(key=lambda h: (-h[0], -h[1].mtime_ms))
        results = [
            {
                "path": entry.path,
                "name": entry.name,
                "description": entry.description,
                "type": entry.type,
                "scope": entry.scope,
                "age_days": entry.age_days,
                "score": score,
                "lines": lines,
            }
            for score, entry, lines in hits[:limit]
        ]
        return scrub({"query": query, "matches": len(hits), "results": results})

    def list_memories(self, *, scope: str = "all") -> dict[str, Any]:
        with self.lock:
            entries = self.engine.memories.list(scope)
        return scrub(
            {
                "count": len(entries),
                "memories": [
                    {
                        "path": e.path,
                        "name": e.name,
                        "description": e.description,
                        "type": e.type,
                        "scope": e.scope,
                        "age_days": e.age_days,
                        "indexed": e.indexed,
                        "tokens": e.tokens,
                    }
                    for e in entries
                ],
            }
        )

    def get(self, path: str) -> dict[str, Any]:
        """One memory with its frontmatter, body, lints and the fingerprint updates need."""
        with self.lock:
            doc = self.engine.memories.read(self._memory_path(path))
        data = doc.to_json()
        data["text"] = doc.text  # update_memory takes the whole file, so give it whole
        data["resource"] = resource_uri(doc.entry.path)
        data.pop("abs_path", None)
        return scrub(data)

    def index_report(self, *, team: bool = False) -> dict[str, Any]:
        with self.lock:
            report = self.engine.memories.index(team)
        data = report.to_json()
        data.pop("loaded_content", None)  # the same lines are in `entries`, marked loaded
        return scrub(data)

    def lint(self) -> dict[str, Any]:
        with self.lock:
            findings = self.engine.memories.lint()
        errors = sum(1 for f in findings if f.severity == "error")
        return scrub({"errors": errors, "findings": [f.to_json() for f in findings]})

    def gauge(self, session: str | None = None) -> dict[str, Any]:
        with self.lock:
            report = self.engine.context.gauge(session=session, latest=session is None)
        data = report.to_json()
        return scrub({k: v for k, v in data.items() if k not in ("overrides",)})

    def compaction_preview(self, session: str | None = None) -> dict[str, Any]:
        """The dry run, trimmed to what a model can act on."""
        with self.lock:
            path = self.engine.context.resolve_transcript(session=session, latest=session is None)
            preview = self.engine.context.compact_preview(str(path))
        sm = preview.session_memory
        survival = preview.survival
        facts = {
            kind: [i.value for i in getattr(survival, kind)[:MAX_FACTS_SHOWN]]
            for kind in ("paths", "commands", "numbers", "identifiers")
        }
        out = {
            "session_id": path.stem,
            "model": preview.model,
            "pre_tokens": preview.pre_tokens,
            "auto_compact_threshold": preview.threshold,
            "would_autocompact": preview.would_autocompact,
            "reason": preview.autocompact_reason,
            "path_taken": preview.chosen,
            "session_memory": {
                "available": sm.available,
                "reason": sm.reason,
                "kept_messages": sm.kept_messages,
                "kept_tokens": sm.kept_tokens,
            },
            "summarised_messages": survival.span_messages,
            "restored_files": [
                {"path": f.path, "tokens": f.tokens} for f in preview.files.restored
            ],
            "facts_at_risk": facts,
            "facts_total": sum(
                len(getattr(survival, kind))
                for kind in ("paths", "commands", "numbers", "identifiers")
            ),
        }
        return scrub(out)

    def compaction_history(self, session: str | None = None) -> dict[str, Any]:
        with self.lock:
            path = self.engine.context.resolve_transcript(session=session, latest=session is None)
            records = self.engine.context.compaction_log.records(path.stem)
        return scrub(
            {
                "session_id": path.stem,
                "compactions": [
                    {
                        "created": r.created,
                        "trigger": r.snapshot.trigger if r.snapshot else None,
                        "pre_tokens": r.snapshot.pre_tokens if r.snapshot else None,
                        "facts": r.snapshot.fact_count if r.snapshot else 0,
                        "report": r.report.to_json() if r.report else None,
                    }
                    for r in records
                ],
            }
        )

    # --- writing ----------------------------------------------------------------------

    def save(
        self,
        *,
        type: str,  # noqa: A002 - the frontmatter key
        name: str,
        description: str,
        body: str,
        team: bool = False,
        file: str | None = None,
        hook: str | None = None,
    ) -> dict[str, Any]:
        """A new memory and its index line: written, or queued for review."""
        store = self.engine.memories
        with self.lock:
            if self.allow_writes:
                result = store.save(
                    type=type,
                    name=name,
                    description=description,
                    body=body,
                    file=file,
                    team=team,
                    hook=hook,
                )
                data = result.to_json()
                data.pop("abs_path", None)
                return scrub({"status": "written", "undo": _undo_hint(result.history_ids), **data})
            plan = plan_save(
                store,
                type=type,
                name=name,
                description=description,
                body=body,
                team=team,
                file=file,
                hook=hook,
            )
            self._guard(plan.target, plan.content)
            self._guard(plan.index_path, plan.index_after)
            files = [_staged(plan.target, None, plan.content)]
            if plan.index_after != plan.index_before:
                files.append(_staged(plan.index_path, plan.index_bytes, plan.index_after))
            proposals = self.engine.agents.review.propose(
                files, source=SOURCE, note=f"save of {name!r} asked for over MCP"
            )
        return self._queued(proposals, path=store.relative(plan.target))

    def update(self, path: str, content: str, fingerprint: str) -> dict[str, Any]:
        """Replace a memory's whole text; refused when it changed since `fingerprint`."""
        store = self.engine.memories
        with self.lock:
            target = self._memory_path(path)
            if self.allow_writes:
                result = store.update(target, content, fingerprint)
                data = result.to_json()
                data.pop("abs_path", None)
                status = "unchanged" if result.unchanged else "written"
                return scrub({"status": status, "undo": _undo_hint(result.history_ids), **data})
            current = self._current(target, fingerprint)
            self._guard(str(target), content)
            proposals = self.engine.agents.review.propose(
                [_staged(str(target), current, content)],
                source=SOURCE,
                note="update asked for over MCP",
            )
            if not proposals:
                raise UserInputError("the new text is the same as the file's: nothing to change")
        return self._queued(proposals, path=store.relative(target))

    def delete(self, path: str, fingerprint: str | None = None) -> dict[str, Any]:
        """Remove a memory and the index lines linking to it: done, or queued for review."""
        store = self.engine.memories
        with self.lock:
            target = self._memory_path(path)
            if self.allow_writes:
                if fingerprint is not None:
                    self._current(target, fingerprint)
                result = store.remove(target)
                return scrub(
                    {
                        "status": "deleted",
                        "undo": _undo_hint(result.history_ids),
                        **result.to_json(),
                    }
                )
            self._current(target, fingerprint)
            queue = self.engine.agents.review
            first = queue.propose_delete(
                str(target), source=SOURCE, note="delete asked for over MCP"
            )
            proposals = [first]
            team = self.engine.locations.is_team_path(str(target))
            index = store.index_path(team)
            try:
                index_bytes: bytes | None = read_bytes(index, INDEX_LIMIT, "MEMORY.md")
            except FileNotFoundError:
                index_bytes = None
            if index_bytes is not None:
                before = index_bytes.decode("utf-8", "replace")
                from workbench.engine.memories.index_edits import without_links

                after, _ = without_links(before, {target}, index.parent)
                if after != before:
                    proposals += queue.propose(
                        [_staged(str(index), index_bytes, after)],
                        source=SOURCE,
                        note=f"index lines for the deletion of {store.relative(target)}",
                        group=first.group,
                    )
        return self._queued(proposals, path=store.relative(target))

    # --- resources --------------------------------------------------------------------

    def resources(self) -> list[ResourceInfo]:
        """MEMORY.md (and the team index) first, then every memory file."""
        out = []
        loc = self.engine.locations
        redact = _redactor()
        with self.lock:
            for team, entry_path in ((False, loc.entrypoint), (True, loc.team_entrypoint)):
                if os.path.isfile(entry_path):
                    rel = loc.relative(entry_path)
                    label = "the team memory index" if team else "the memory index"
                    out.append(ResourceInfo(resource_uri(rel), rel, f"{rel}: {label}"))
            for entry in self.engine.memories.list("all"):
                if Path(entry.path).name == "MEMORY.md":
                    continue
                out.append(
                    ResourceInfo(
                        resource_uri(entry.path),
                        redact(entry.path),
                        redact(entry.description or entry.name),
                    )
                )
        return out

    def read_resource(self, uri_or_path: str) -> str:
        if uri_or_path.startswith(OPAQUE_PREFIX):
            rel = self._path_of_hash(uri_or_path[len(OPAQUE_PREFIX) :])
        else:
            rel = path_from_uri(uri_or_path) if "://" in uri_or_path else uri_or_path
        with self.lock:
            target = self._memory_path(rel, index_ok=True)
            try:
                text = read_text(
                    target, MEMORY_FILE_LIMIT, "a memory file", universal_newlines=True
                )
            except FileNotFoundError:
                raise NotFoundError(f"no memory file {rel}") from None
            except IsADirectoryError:
                raise NotFoundError(f"{rel} is a folder") from None
        return _redactor()(text)

    def _path_of_hash(self, digest: str) -> str:
        """The memory file an opaque resource URI names (see `resource_uri`)."""
        with self.lock:
            for entry in self.engine.memories.list("all"):
                if _path_hash(entry.path) == digest:
                    return entry.path
        raise NotFoundError("no memory file has that resource id (renamed or deleted?)")

    # --- helpers ----------------------------------------------------------------------

    def _memory_path(self, path: str, *, index_ok: bool = False) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise UserInputError("give the memory's path (as list_memories shows it)")
        target = self.engine.memories.resolve(path.strip())
        if target.suffix != ".md":
            raise UserInputError(f"{path} is not a memory file (they end in .md)")
        if target.name == "MEMORY.md" and not index_ok:
            raise UserInputError(
                "MEMORY.md is the index; it is read with memory_index_report and changed by "
                "saving or deleting memories"
            )
        return target

    def _current(self, target: Path, fingerprint: str | None) -> bytes:
        import hashlib

        try:
            data = read_bytes(target, MEMORY_FILE_LIMIT, "a memory file")
        except FileNotFoundError:
            raise NotFoundError(f"no memory file {self.engine.memories.relative(target)}") from None
        if fingerprint is not None and hashlib.sha256(data).hexdigest() != fingerprint:
            raise ConflictError(
                f"{self.engine.memories.relative(target)} changed since it was read; get it "
                "again and redo the change"
            )
        return data

    def _guard(self, path: str | Path, content: str) -> None:
        from workbench.engine.agents.review_queue import team_secret_refusal

        refusal = team_secret_refusal(self.engine, str(path), content)
        if refusal:
            raise RefusedWriteError(refusal)

    def _queued(self, proposals: Sequence[Any], *, path: str) -> dict[str, Any]:
        return scrub(
            {
                "status": "queued for review",
                "path": path,
                "proposals": [
                    {"id": p.id, "path": p.path, "kind": p.kind, "scope": p.scope}
                    for p in proposals
                ],
                "note": (
                    "nothing changed on disk yet: the user accepts or rejects these in the "
                    "workbench (review pane, or `workbench review list`)"
                ),
            }
        )


def _engine_choice(value: str) -> EngineChoice:
    """`value` as a recall engine choice; a `UserInputError` for anything else."""
    # Imported here: recall runs right after, and the MCP server's start stays light.
    from workbench.engine.recall.models import ENGINE_CHOICES

    for choice in ENGINE_CHOICES:
        if value == choice:
            return choice
    raise UserInputError("engine must be auto, offline or llm")


def _undo_hint(history_ids: Sequence[str]) -> str | None:
    return f"workbench undo {history_ids[0]}" if history_ids else None


def _staged(path: str | Path, original: bytes | None, content: str) -> Any:
    from workbench.engine.agents.tools import StagedFile

    return StagedFile(str(path), original, content)


def _snippets(text: str, words: Sequence[str], limit: int = 3) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        lowered = line.lower()
        if any(w in lowered for w in words):
            shown = line.strip()
            if len(shown) > _SNIPPET_WIDTH:
                shown = shown[: _SNIPPET_WIDTH - 1] + "…"
            out.append({"line": number, "text": shown})
            if len(out) >= limit:
                break
    return out


@dataclass(frozen=True)
class SavePlan:
    """What a save would write, computed without writing anything."""

    target: str
    content: str
    index_path: str
    index_bytes: bytes | None
    index_before: str
    index_after: str


def plan_save(
    store: Any,
    *,
    type: str,  # noqa: A002
    name: str,
    description: str,
    body: str,
    team: bool,
    file: str | None,
    hook: str | None,
) -> SavePlan:
    """The two files `MemoryStore.save` would write (the memory and its index line).

    Built from the store's own helpers so a queued save and a direct one produce the same
    text; a file that already exists is refused, as `save` refuses it without `replace`.
    """
    store._validate_new(type, name, description)
    target = store._target_for(file, type, name, team)
    if target.exists():
        raise UserInputError(
            f"{store.relative(target)} already exists: read it and use update_memory instead"
        )
    content = store.compose(type, name, description, body)
    index_bytes, before = store._read_index(team)
    line = store._index_line_for(target, name, hook or description, team)
    after = store._with_index_line(before, target, line, team)
    return SavePlan(str(target), content, str(store.index_path(team)), index_bytes, before, after)
