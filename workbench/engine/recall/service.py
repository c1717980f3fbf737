"""`engine.recall`: simulate which memories Claude Code would surface for a prompt, and why.

Two paths produce a selection from the same candidates: Claude Code's model selector (when a
key is set) and the offline BM25 ranker. Either way the result explains itself: reasons for
each pick, near misses with what kept them out, freshness, and the exact text injected.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypedDict

from workbench.engine.errors import UserInputError
from workbench.engine.llm.config import LLMConfig
from workbench.engine.llm.errors import LLMError
from workbench.engine.memories.frontmatter import normalize_text, parse_frontmatter
from workbench.engine.memories.scan import MemoryHeader, MemoryScanner, format_manifest
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.recall.freshness import (
    freshness_text,
    memory_age,
    memory_age_days,
    now_ms,
)
from workbench.engine.recall.models import (
    ENGINE_CHOICES,
    EngineChoice,
    NearMiss,
    RecallResult,
    SelectedMemory,
)
from workbench.engine.recall.ranker import (
    BODY_PEEK_CHARS,
    TOOLS_WARNING_BOOST,
    OfflineRanker,
    RankDocument,
    RankedMemory,
)
from workbench.engine.recall.selector import (
    MAX_SELECTED,
    build_selector_request,
    parse_selection,
)
from workbench.engine.recall.signals import SessionSignals, session_signals
from workbench.engine.recall.surfacing import SurfacingView, read_for_surfacing, surface
from workbench.engine.userfiles import read_start
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.llm.client import ModelClient
    from workbench.engine.llm.request import ModelReply
    from workbench.engine.memories.models import LintFinding

SELECT_RELATIVE_CUTOFF = 0.5
"""Offline, a memory must score at least this share of the best score to be selected."""
SELECT_MIN_SCORE = 1.0
"""…and at least this much, so one faint match never surfaces a memory on its own…"""
SELECT_MIN_COVERAGE = 0.5
"""…unless it holds at least half of the query's words: in a small or uniform folder BM25
scores stay low even for clear matches, because every file shares the words."""
NEAR_MISS_LIMIT = 5
_HEAD_BYTES = 8192
_FIELD_LABELS = {
    "description": "description",
    "name": "name",
    "path": "file name",
    "body": f"body (first {BODY_PEEK_CHARS:,} characters)",
}


class _Signals(TypedDict):
    """What both rankers are told about the session, passed on as keyword arguments."""

    recent_tools: Sequence[str]
    surfaced: Iterable[str]
    read_files: Iterable[str]
    session_bytes: int | None
    now: float | None


class RecallService:
    """Recall simulation over one memory folder."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.scanner = MemoryScanner(
            engine.locations.memory_dir,
            reads_type_at=engine.profile.memory_files.reads_type_at,
        )
        self._documents: dict[str, tuple[float, int, RankDocument]] = {}
        self._ranker: OfflineRanker | None = None
        self._ranker_key: tuple[tuple[str, float, int], ...] | None = None
        self._manifest_cache: tuple[tuple[tuple[str, float], ...], str] | None = None

    @property
    def memory_dir(self) -> str:
        return self.engine.locations.memory_dir

    @property
    def llm_config(self) -> LLMConfig:
        """The model settings from the engine's environment."""
        return LLMConfig.from_env(self.engine.env)

    # --- candidates and request ---------------------------------------------------------

    def resolve_paths(self, paths: Iterable[str]) -> tuple[str, ...]:
        """Absolute, normalised forms of memory paths given relative or absolute."""
        out = []
        for raw in paths:
            text = raw.strip()
            if not text:
                continue
            full = text if os.path.isabs(text) else os.path.join(self.memory_dir, text)
            out.append(os.path.normpath(full))
        return tuple(dict.fromkeys(out))

    def scan(self) -> list[MemoryHeader]:
        """`scanMemoryFiles`: newest first, at most 200 (re-reads only changed files)."""
        return self.scanner.scan()

    def candidates(
        self, surfaced: Iterable[str] = (), headers: list[MemoryHeader] | None = None
    ) -> list[MemoryHeader]:
        """The scan minus memories already surfaced, so the 5 slots go to fresh ones."""
        gone = set(self.resolve_paths(surfaced))
        scanned = self.scan() if headers is None else headers
        return [h for h in scanned if os.path.normpath(h.file_path) not in gone]

    def manifest(self, surfaced: Iterable[str] = ()) -> str:
        """The manifest the selector would be sent."""
        return self._manifest_for(self.candidates(surfaced))

    def _manifest_for(self, candidates: list[MemoryHeader]) -> str:
        """`format_manifest`, remembered for the last candidate list (it is asked often)."""
        key = tuple((h.file_path, h.mtime_ms) for h in candidates)
        if self._manifest_cache is not None and self._manifest_cache[0] == key:
            return self._manifest_cache[1]
        text = format_manifest(candidates)
        self._manifest_cache = (key, text)
        return text

    def build_request(
        self, query: str, *, recent_tools: Sequence[str] = (), surfaced: Iterable[str] = ()
    ) -> dict[str, object] | None:
        """The exact selector request body; None when no candidate is left to offer."""
        candidates = self.candidates(surfaced)
        if not candidates:
            return None
        return build_selector_request(
            query,
            format_manifest(candidates),
            model=self.llm_config.model,
            recent_tools=_clean_tools(recent_tools),
        )

    # --- the offline ranker --------------------------------------------------------------

    def ranker(self, headers: list[MemoryHeader] | None = None) -> OfflineRanker:
        """The BM25 ranker over the scanned memories, rebuilt only when files change."""
        scanned = self.scan() if headers is None else headers
        key = tuple((h.file_path, h.mtime_ms, h.size_bytes) for h in scanned)
        if self._ranker is not None and key == self._ranker_key:
            return self._ranker
        fresh: dict[str, tuple[float, int, RankDocument]] = {}
        documents = []
        for header in scanned:
            cached = self._documents.get(header.file_path)
            if cached and cached[0] == header.mtime_ms and cached[1] == header.size_bytes:
                document = cached[2]
            else:
                document = _document_for(header)
            fresh[header.file_path] = (header.mtime_ms, header.size_bytes, document)
            documents.append(document)
        self._documents = fresh
        self._ranker = OfflineRanker(documents)
        self._ranker_key = key
        return self._ranker

    def recall_offline(
        self,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        surfaced: Iterable[str] = (),
        read_files: Iterable[str] = (),
        session_bytes: int | None = None,
        now: float | None = None,
        requested_engine: str = "offline",
        error: dict[str, object] | None = None,
        notes: Sequence[str] = (),
    ) -> RecallResult:
        """Rank the candidates with BM25 and explain the pick; no network."""
        now = now_ms() if now is None else now
        tools = _clean_tools(recent_tools)
        scanned = self.scan()
        surfaced_abs = self.resolve_paths(surfaced)
        candidates = self.candidates(surfaced_abs, scanned)
        by_key = {h.filename: h for h in scanned}
        ages = {h.filename: memory_age_days(h.mtime_ms, now) for h in scanned}
        ranked = self.ranker(scanned).rank(query, recent_tools=tools, ages=ages)
        candidate_keys = {h.filename for h in candidates}
        read = set(self.resolve_paths(read_files))
        top = max(
            (r.score for r in ranked if r.key in candidate_keys and not r.excluded), default=0.0
        )
        cutoff = SELECT_RELATIVE_CUTOFF * top
        eligible = [
            r
            for r in ranked
            if r.key in candidate_keys
            and not r.excluded
            and r.content_match
            and r.score >= cutoff
            and _strong_enough(r)
        ]
        chosen: list[RankedMemory] = []
        read_skipped: list[RankedMemory] = []
        for r in eligible:
            if os.path.normpath(by_key[r.key].file_path) in read:
                read_skipped.append(r)  # post-filter: the agent already has this file
            elif len(chosen) < MAX_SELECTED:
                chosen.append(r)
        rank_of = {r.key: i for i, r in enumerate(ranked, 1)}
        selected = tuple(
            self._selected(
                by_key[r.key],
                now,
                r.score,
                _offline_reasons(r, rank_of[r.key], len(candidates), ages),
            )
            for r in chosen
        )
        chosen_keys = {r.key for r in chosen}
        misses = []
        for r in ranked:
            if r.key in chosen_keys or (r.score <= 0 and not r.excluded):
                continue
            if r.key not in candidate_keys:
                why = "already surfaced earlier in this session; recall never offers it twice"
                misses.append(NearMiss(r.key, _round(r.score), why, candidate=False))
            else:
                why = _offline_why_not(r, rank_of[r.key], cutoff, r in read_skipped)
                misses.append(NearMiss(r.key, _round(r.score), why))
            if len(misses) == NEAR_MISS_LIMIT:
                break
        view = self._surfacing(query, selected, surfaced_abs, session_bytes, now)
        all_notes = list(notes)
        if not candidates:
            all_notes.append("no memory is left to offer once already-surfaced files are removed")
        return RecallResult(
            query=query,
            engine="offline",
            requested_engine=requested_engine,
            candidates=tuple(h.filename for h in candidates),
            manifest=self._manifest_for(candidates),
            selected=selected,
            near_misses=tuple(misses),
            request=None,
            surfacing=view,
            recent_tools=tools,
            surfaced=tuple(self._rel(p) for p in surfaced_abs),
            notes=tuple(all_notes),
            error=error,
            cutoff=_round(cutoff),
        )

    # --- the model selector ---------------------------------------------------------------

    async def recall_llm(
        self,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        surfaced: Iterable[str] = (),
        read_files: Iterable[str] = (),
        session_bytes: int | None = None,
        now: float | None = None,
        client: ModelClient | None = None,
        requested_engine: str = "llm",
    ) -> RecallResult:
        """Ask the model as Claude Code does; API failures raise `LLMError`."""
        now = now_ms() if now is None else now
        tools = _clean_tools(recent_tools)
        scanned = self.scan()
        surfaced_abs = self.resolve_paths(surfaced)
        candidates = self.candidates(surfaced_abs, scanned)
        manifest = self._manifest_for(candidates)
        by_key = {h.filename: h for h in scanned}
        notes: list[str] = []
        request = None
        answer = None
        accepted: tuple[str, ...] = ()
        rejected: tuple[str, ...] = ()
        if not candidates:
            notes.append("no memory is left to offer, so the model is not asked")
        else:
            request = build_selector_request(
                query, manifest, model=self.llm_config.model, recent_tools=tools
            )
            reply = await self._ask(request, client)
            answer = reply.first_text
            parsed = parse_selection(answer, [h.filename for h in candidates])
            accepted, rejected = parsed.accepted, parsed.unknown
            if parsed.problem:
                notes.append(f"{parsed.problem}; Claude Code treats that as no memories")
            if parsed.unknown:
                notes.append(
                    f"dropped {plural(len(parsed.unknown), 'name')} the model gave that are not "
                    "candidate files"
                )
            if parsed.over_limit:
                notes.append(
                    f"dropped {plural(len(parsed.over_limit), 'pick')} beyond the limit of {MAX_SELECTED}"
                )
        ages = {h.filename: memory_age_days(h.mtime_ms, now) for h in scanned}
        ranked = self.ranker(scanned).rank(query, recent_tools=tools, ages=ages) if scanned else []
        evidence = {r.key: r for r in ranked}
        read = set(self.resolve_paths(read_files))
        selected = []
        read_dropped = []
        for number, key in enumerate(accepted, 1):
            header = by_key[key]
            if os.path.normpath(header.file_path) in read:
                read_dropped.append(key)
                continue
            reasons = [f"chosen by the model (pick {number} of {len(accepted)})"]
            reasons += _evidence(evidence.get(key))
            selected.append(self._selected(header, now, None, tuple(reasons)))
        misses = []
        for key in read_dropped:
            misses.append(
                NearMiss(
                    key,
                    None,
                    "the model chose it, but the agent already read this file "
                    "in the session, so it is not surfaced again",
                )
            )
        candidate_keys = {h.filename for h in candidates}
        for r in ranked:
            if len(misses) >= NEAR_MISS_LIMIT:
                break
            if r.key in accepted or r.score <= 0:
                continue
            matched = _matched_words(r)
            detail = f"; offline score {_shown(r.score)}" + (
                f", matching {matched}" if matched else ""
            )
            if r.key not in candidate_keys:
                why = "already surfaced earlier in this session; recall never offers it twice"
                misses.append(NearMiss(r.key, _round(r.score), why, candidate=False))
            else:
                misses.append(NearMiss(r.key, _round(r.score), "the model left it out" + detail))
        view = self._surfacing(query, tuple(selected), surfaced_abs, session_bytes, now)
        return RecallResult(
            query=query,
            engine="llm",
            requested_engine=requested_engine,
            candidates=tuple(h.filename for h in candidates),
            manifest=manifest,
            selected=tuple(selected),
            near_misses=tuple(misses),
            request=request,
            surfacing=view,
            recent_tools=tools,
            surfaced=tuple(self._rel(p) for p in surfaced_abs),
            rejected_names=rejected,
            model_answer=answer,
            notes=tuple(notes),
        )

    async def recall(
        self,
        query: str,
        *,
        engine: EngineChoice = "auto",
        recent_tools: Sequence[str] = (),
        surfaced: Iterable[str] = (),
        read_files: Iterable[str] = (),
        session_bytes: int | None = None,
        now: float | None = None,
        client: ModelClient | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> RecallResult:
        """Run the chosen path; `auto` asks the model when a key is set, else ranks offline.

        `on_progress` hears each step (scanning the folder, asking the model, ranking);
        raising `OperationCancelled` from it stops the run at that step.

        On `auto`, a failed model call falls back to the offline ranking and says why; on
        `llm` it raises the `LLMError`. Where recall could not be observed in the release in
        use, the result's notes say so.
        """
        result = await self._recall(
            query,
            engine=engine,
            recent_tools=recent_tools,
            surfaced=surfaced,
            read_files=read_files,
            session_bytes=session_bytes,
            now=now,
            client=client,
            report=Reporter(on_progress, "recall", None, unit="steps"),
        )
        note = self.engine.profile.unobserved("recall")
        if note is None:
            return result
        import dataclasses

        return dataclasses.replace(result, notes=(*result.notes, note))

    async def _recall(
        self,
        query: str,
        *,
        engine: EngineChoice,
        recent_tools: Sequence[str],
        surfaced: Iterable[str],
        read_files: Iterable[str],
        session_bytes: int | None,
        now: float | None,
        client: ModelClient | None,
        report: Reporter,
    ) -> RecallResult:
        if engine not in ENGINE_CHOICES:
            raise UserInputError(f"unknown recall engine {engine!r} (auto, llm or offline)")
        if not query.strip():
            raise UserInputError("the recall query is empty")
        surfaced = tuple(surfaced)
        report(0, "scanning the memory folder", force=True)
        self.scan()  # the slow part on a big folder; the paths below re-read only changes
        kwargs: _Signals = {
            "recent_tools": recent_tools,
            "surfaced": surfaced,
            "read_files": tuple(read_files),
            "session_bytes": session_bytes,
            "now": now,
        }
        use_model = engine == "llm" or (engine == "auto" and self.llm_config.has_key)
        if not use_model:
            note = (
                "ANTHROPIC_API_KEY is not set, so the offline ranker ran"
                if engine == "auto"
                else ""
            )
            report(1, "ranking offline", force=True)
            return self.recall_offline(
                query, requested_engine=engine, notes=[note] if note else [], **kwargs
            )
        report(1, "asking the model", force=True)
        if engine == "llm":
            return await self.recall_llm(query, client=client, requested_engine=engine, **kwargs)
        try:
            return await self.recall_llm(query, client=client, requested_engine=engine, **kwargs)
        except LLMError as exc:
            report(2, "ranking offline", force=True)
            return self.recall_offline(
                query,
                requested_engine=engine,
                error=exc.to_json(),
                notes=[f"the model call failed ({exc}); showing the offline ranking instead"],
                **kwargs,
            )

    def run(self, query: str, **kwargs: object) -> RecallResult:
        """`recall` for callers without an event loop (the CLI)."""
        import asyncio

        return asyncio.run(self.recall(query, **kwargs))  # type: ignore[arg-type]

    # --- sessions and lint ----------------------------------------------------------------

    def signals(self, transcript: str) -> SessionSignals:
        """Recently used tools, surfaced memories and read files from a transcript."""
        return session_signals(transcript)

    def lint_descriptions(self) -> list[LintFinding]:
        """Descriptions recall can never match well: missing, generic or duplicated."""
        from workbench.engine.recall.description_lint import lint_descriptions

        return lint_descriptions(self.scanner.scan_all(), self.memory_dir)

    # --- helpers ------------------------------------------------------------------------

    async def _ask(self, request: dict[str, object], client: ModelClient | None) -> ModelReply:
        if client is not None:
            return await client.create(request)
        from workbench.engine.llm.client import ModelClient

        async with ModelClient(self.llm_config) as own:
            return await own.create(request)

    def _rel(self, abs_path: str) -> str:
        if abs_path.startswith(self.memory_dir):
            return abs_path[len(self.memory_dir) :]
        return abs_path

    def _selected(
        self, header: MemoryHeader, now: float, score: float | None, reasons: tuple[str, ...]
    ) -> SelectedMemory:
        days = memory_age_days(header.mtime_ms, now)
        return SelectedMemory(
            path=header.filename,
            abs_path=header.file_path,
            type=header.type,
            description=header.description,
            mtime=header.mtime_iso,
            age_days=days,
            age=memory_age(days),
            freshness_note=freshness_text(days) or None,
            score=None if score is None else _round(score),
            reasons=reasons,
        )

    def _surfacing(
        self,
        query: str,
        selected: tuple[SelectedMemory, ...],
        surfaced_abs: tuple[str, ...],
        session_bytes: int | None,
        now: float,
    ) -> SurfacingView:
        if session_bytes is None:
            session_bytes = self._surfaced_bytes(surfaced_abs)
        picks = [(s.path, s.abs_path, _mtime_ms(s.abs_path)) for s in selected]
        return surface(picks, now=now, session_bytes_before=session_bytes, query=query)

    def _surfaced_bytes(self, surfaced_abs: tuple[str, ...]) -> int:
        """What earlier turns injected for these files (read as recall would have)."""
        from workbench.engine.jsutil import js_len

        total = 0
        for path in surfaced_abs:
            try:
                total += js_len(read_for_surfacing(path).content)
            except OSError:
                continue
        return total


def _clean_tools(tools: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in tools if t and t.strip()))


def _round(value: float) -> float:
    return round(value, 3)


def _shown(value: float) -> str:
    """A score for a sentence, from the value the result keeps (`_round`), so the text and
    the figures the front ends print from the result never differ in the last digit."""
    return f"{_round(value):.2f}"


def _mtime_ms(path: str) -> float:
    try:
        return os.stat(path).st_mtime_ns / 1_000_000
    except OSError:
        return 0.0


def _document_for(header: MemoryHeader) -> RankDocument:
    """Name and a body peek for one memory (the scan header has neither)."""
    name = ""
    body = ""
    try:
        head, _ = read_start(header.file_path, _HEAD_BYTES)  # regular files only
        text = normalize_text(head.decode("utf-8", errors="replace"))
        parsed = parse_frontmatter(text)
        raw_name = parsed.data.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        body = text[parsed.body_offset :] if parsed.present else text
    except OSError:
        pass
    return RankDocument(
        key=header.filename,
        name=name,
        description=header.description or "",
        type=header.type,
        body=body[:BODY_PEEK_CHARS],
    )


def _quote(items: Iterable[str]) -> str:
    return ", ".join(f"'{w}'" for w in dict.fromkeys(items))


def _related_text(pairs: Iterable[tuple[str, str]]) -> str:
    """`'npm', 'yarn' (related to 'package manager')`, grouped by query word."""
    by_trigger: dict[str, list[str]] = {}
    for member, trigger in pairs:
        by_trigger.setdefault(trigger, [])
        if member not in by_trigger[trigger]:
            by_trigger[trigger].append(member)
    return "; ".join(f"{_quote(m)} (related to '{t}')" for t, m in by_trigger.items())


def _matched_words(r: RankedMemory) -> str:
    found: list[str] = []
    for words in r.matches.values():
        found.extend(words)
    text = _quote(found)
    near = [pair for pairs in r.related.values() for pair in pairs]
    if near:
        text = f"{text}; {_related_text(near)}" if text else _related_text(near)
    return text


def _evidence(r: RankedMemory | None) -> list[str]:
    """What the offline ranker found in a memory, as supporting reasons."""
    if r is None or not r.content_match:
        return ["no words in common with the query: the model judged it by meaning"]
    out = []
    for field_name, label in _FIELD_LABELS.items():
        if r.matches.get(field_name):
            out.append(f"{label} matches {_quote(r.matches[field_name])}")
        if r.related.get(field_name):
            out.append(f"{label} has {_related_text(r.related[field_name])}")
    return out


def _offline_reasons(
    r: RankedMemory, rank: int, candidate_count: int, ages: dict[str, int]
) -> tuple[str, ...]:
    reasons = [f"ranked {rank} of {candidate_count} with score {_shown(r.score)}"]
    for field_name, label in _FIELD_LABELS.items():
        part = r.field_scores.get(field_name, 0.0)
        direct = r.matches.get(field_name)
        near = r.related.get(field_name)
        if direct and near:
            reasons.append(
                f"{label} matches {_quote(direct)} and has {_related_text(near)} (+{part:.2f})"
            )
        elif direct:
            reasons.append(f"{label} matches {_quote(direct)} (+{part:.2f})")
        elif near:
            reasons.append(f"{label} has {_related_text(near)} (+{part:.2f})")
    if r.matches.get("type"):
        part = r.field_scores.get("type", 0.0)
        reasons.append(f"its type fits {_quote(r.matches['type'])} (+{part:.2f})")
    days = ages.get(r.key, 0)
    reasons.append(f"freshness ×{r.freshness:.2f} (saved {memory_age(days)})")
    if r.tools is not None and r.tools.kind == "warning":
        reasons.append(
            f"tools rule: a warning about {r.tools.tool}, which was just used, is kept "
            f"(×{TOOLS_WARNING_BOOST:.2f})"
        )
    return tuple(reasons)


def _strong_enough(r: RankedMemory) -> bool:
    return r.score >= SELECT_MIN_SCORE or r.coverage >= SELECT_MIN_COVERAGE


def _offline_why_not(r: RankedMemory, rank: int, cutoff: float, already_read: bool) -> str:
    if r.excluded and r.tools is not None:
        return (
            f"tools rule: usage reference for {r.tools.tool}, which the agent just used "
            "successfully, so it is left out"
        )
    if already_read:
        return "the agent already read this file in the session, so it is not surfaced again"
    if not r.content_match:
        return (
            f"score {_shown(r.score)} comes only from its type fitting the query; "
            "nothing in its name, description, file name or body matched"
        )
    matched = _matched_words(r)
    if r.score >= cutoff and _strong_enough(r):
        return f"ranked {rank}: only {MAX_SELECTED} memories are surfaced per turn"
    if r.score >= cutoff:
        return (
            f"too weak a match on its own: score {_shown(r.score)} (under {SELECT_MIN_SCORE:.2f}) "
            f"and it holds {r.coverage:.0%} of the query's words ({matched})"
        )
    return (
        f"score {_shown(r.score)} is under the cut-off {_shown(cutoff)} "
        f"({SELECT_RELATIVE_CUTOFF:.0%} of the best); it matched only {matched}"
    )
