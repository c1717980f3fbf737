"""The offline recall ranker: BM25 per field, stemming, the tools rule and freshness.

Each memory is indexed as five fields (description, name, file path, type and a bounded peek
at the body), each its own BM25 index (bm25s) over Snowball-stemmed words (PyStemmer). A
query's score is the weighted sum of the field scores, adjusted by the recently-used-tools
rule and a mild freshness factor. Scores keep their parts, so every result can say which
words matched where.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workbench.engine.recall.words import STOPWORDS, words

if TYPE_CHECKING:
    import numpy as np

FIELD_WEIGHTS: Mapping[str, float] = {
    "description": 1.0,
    "name": 0.7,
    "path": 0.5,
    "body": 0.35,
    "type": 0.25,
}
CONTENT_FIELDS = ("description", "name", "path", "body")
BODY_PEEK_CHARS = 1500
"""How much of each body the ranker reads: enough for the gist, bounded for speed."""

# Hints that tie everyday query words to the four memory types.
TYPE_HINTS: Mapping[str, str] = {
    "user": "user me my i role background preference preferences prefer expertise experience "
    "person style",
    "feedback": "feedback rule rules convention conventions must always never avoid "
    "guidance correction allowed",
    "project": "project deadline decision plan schedule status goal freeze launch incident "
    "date dates milestone",
    "reference": "reference where link links dashboard dashboards board channel docs "
    "documentation runbook tracker system find",
}
WARNING_WORDS = frozenset(
    """warning warnings warn gotcha gotchas caveat caveats pitfall pitfalls bug bugs issue
    issues known broken breaks break fails failing fail failure flaky never avoid careful
    beware quirk quirks trap traps crash crashes hang hangs corrupt corrupts dont don't not
    must danger dangerous no don""".split()
)
DOCS_WORDS = frozenset(
    """usage reference docs documentation api guide howto syntax flags options cheatsheet
    commands command manual endpoint endpoints catalogue catalog tutorial""".split()
)
RELATED_WEIGHT = 0.5
"""A related word (see `thesaurus`) counts for half of a direct match."""
TOOLS_WARNING_BOOST = 1.15
FRESHNESS_FLOOR = 0.85
FRESHNESS_SCALE_DAYS = 90.0


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # type: ignore[import-not-found]  # PyStemmer (C, ships no type stubs)

    return Stemmer.Stemmer("english")


def stem_words(items: Sequence[str]) -> list[str]:
    """Snowball stems of `items`, in order."""
    return list(_stemmer().stemWords(list(items))) if items else []


def analyze(text: str, *, keep_stopwords: bool = False) -> list[tuple[str, str]]:
    """`(stem, surface word)` pairs for the meaningful words of `text`."""
    found = [w for w in words(text) if keep_stopwords or w not in STOPWORDS]
    return list(zip(stem_words(found), found, strict=True))


def freshness_factor(age_days: int) -> float:
    """A mild preference for recent memories: 1.0 when new, easing towards 0.85."""
    return FRESHNESS_FLOOR + (1 - FRESHNESS_FLOOR) * math.exp(-age_days / FRESHNESS_SCALE_DAYS)


def tool_terms(tool: str) -> set[str]:
    """The words that show a memory is about `tool` (`mcp__github__x` → the server too)."""
    name = tool.strip()
    terms = {name.lower()}
    if name.startswith("mcp__"):
        parts = [p for p in name.split("__")[1:] if p]
        if parts:
            terms.add(parts[0].lower())
    return {t for t in terms if t}


@dataclass(frozen=True)
class RankDocument:
    """One memory as the ranker sees it."""

    key: str
    """The candidate's relative path (its identity)."""
    name: str
    description: str
    type: str | None
    body: str

    def field_text(self, name: str) -> str:
        if name == "description":
            return self.description
        if name == "name":
            return self.name
        if name == "path":
            return self.key.removesuffix(".md").replace("/", " ")
        if name == "body":
            return self.body[:BODY_PEEK_CHARS]
        hint = TYPE_HINTS.get(self.type) if self.type is not None else None
        return f"{self.type} {hint}" if hint is not None else ""

    @property
    def surface_words(self) -> set[str]:
        """Plain lower-case words of name, description and path (for the tools rule)."""
        return set(words(f"{self.name} {self.description} {self.field_text('path')}"))


@dataclass(frozen=True)
class ToolsVerdict:
    """How the recently-used-tools rule treated one memory."""

    tool: str
    kind: str
    """`warning` (kept, boosted) or `usage` (left out)."""


@dataclass(frozen=True)
class RankedMemory:
    """One candidate's score with everything needed to explain it."""

    key: str
    score: float
    base_score: float
    field_scores: Mapping[str, float]
    matches: Mapping[str, tuple[str, ...]]
    """Field → the query words that matched in it."""
    freshness: float
    related: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Field → related words that matched, as `(word, the query word it relates to)`."""
    coverage: float = 0.0
    """Share of the query's words found directly in name, description, path or body."""
    tools: ToolsVerdict | None = None
    excluded: bool = False
    """Left out by the tools rule whatever its score."""

    @property
    def content_match(self) -> bool:
        """It matched the query somewhere other than the type hints."""
        return any(self.matches.get(f) or self.related.get(f) for f in CONTENT_FIELDS)


@dataclass
class OfflineRanker:
    """BM25 indexes over a fixed set of memories; build once, query many times."""

    documents: Sequence[RankDocument]
    _indexes: dict[str, Any] = field(default_factory=dict, repr=False)
    _doc_stems: dict[str, list[set[str]]] = field(default_factory=dict, repr=False)
    _positions: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # Deferred: a noticeable import, needed only when recall runs offline. bm25s ships no
        # type information.
        import bm25s  # type: ignore[import-untyped]

        self._positions = {doc.key: i for i, doc in enumerate(self.documents)}
        for name in FIELD_WEIGHTS:
            tokenized = [
                [stem for stem, _ in analyze(doc.field_text(name))] for doc in self.documents
            ]
            self._doc_stems[name] = [set(tokens) for tokens in tokenized]
            if not any(tokenized):
                continue  # no document has words here (bm25s cannot index an empty field)
            index = bm25s.BM25(k1=1.2, b=0.75)
            index.index(tokenized, show_progress=False)
            self._indexes[name] = index

    def __len__(self) -> int:
        return len(self.documents)

    def rank(
        self,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        keys: Iterable[str] | None = None,
        ages: Mapping[str, int] | None = None,
    ) -> list[RankedMemory]:
        """Score the documents named by `keys` (all by default), best first.

        Only memories that match the query at all (a positive score) are returned. `ages`
        gives each memory's age in days for the freshness factor (0 when absent).
        """
        wanted = (
            list(self._positions) if keys is None else [k for k in keys if k in self._positions]
        )
        if not wanted or not self.documents:
            return []
        pairs = analyze(query)
        surface_by_stem: dict[str, str] = {}
        for stem, word in pairs:
            surface_by_stem.setdefault(stem, word)
        stems = list(surface_by_stem)
        related = expand_related(pairs)
        field_arrays: dict[str, np.ndarray] = {}
        related_arrays: dict[str, np.ndarray] = {}
        for name, index in self._indexes.items():
            if stems:
                field_arrays[name] = index.get_scores(stems)
            if related:
                related_arrays[name] = index.get_scores(list(related))
        tool_terms_by_tool = {tool: tool_terms(tool) for tool in recent_tools if tool.strip()}
        # Sum the fields with numpy first, so the per-memory explanation work below only
        # runs for memories that matched something.
        total: np.ndarray | None = None
        for name, weight in FIELD_WEIGHTS.items():
            for arrays, factor in ((field_arrays, 1.0), (related_arrays, RELATED_WEIGHT)):
                if name in arrays:
                    scaled = arrays[name] * (weight * factor)
                    total = scaled if total is None else total + scaled
        if total is None:
            return []
        ranked = []
        for key in wanted:
            pos = self._positions[key]
            if total[pos] <= 0:
                continue
            doc = self.documents[pos]
            field_scores: dict[str, float] = {}
            matches: dict[str, tuple[str, ...]] = {}
            related_hits: dict[str, tuple[tuple[str, str], ...]] = {}
            base = 0.0
            for name, weight in FIELD_WEIGHTS.items():
                direct = float(field_arrays[name][pos]) if name in field_arrays else 0.0
                near = float(related_arrays[name][pos]) if name in related_arrays else 0.0
                part = (direct + RELATED_WEIGHT * near) * weight
                if part <= 0:
                    continue
                field_scores[name] = part
                base += part
                doc_stems = self._doc_stems[name][pos]
                hit = tuple(surface_by_stem[s] for s in stems if s in doc_stems)
                if hit:
                    matches[name] = hit
                near_hit = tuple(
                    (member, trigger)
                    for stem, (member, trigger) in related.items()
                    if stem in doc_stems
                )
                if near_hit:
                    related_hits[name] = near_hit
            covered = {w for f in CONTENT_FIELDS for w in matches.get(f, ())}
            coverage = len(covered) / len(stems) if stems else 0.0
            fresh = freshness_factor((ages or {}).get(key, 0))
            verdict = _tools_verdict(doc, tool_terms_by_tool)
            score = base * fresh
            if verdict is not None and verdict.kind == "warning":
                score *= TOOLS_WARNING_BOOST
            ranked.append(
                RankedMemory(
                    key=key,
                    score=score,
                    base_score=base,
                    field_scores=field_scores,
                    matches=matches,
                    freshness=fresh,
                    related=related_hits,
                    coverage=coverage,
                    tools=verdict,
                    excluded=verdict is not None and verdict.kind == "usage",
                )
            )
        ranked.sort(key=lambda r: (-r.score, self._positions[r.key]))
        return ranked


@lru_cache(maxsize=1)
def _related_table() -> Mapping[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Stemmed phrase → `(stem, member word)` of its related words."""
    from workbench.engine.recall.thesaurus import CLUSTERS

    table: dict[tuple[str, ...], dict[str, str]] = {}
    for cluster in CLUSTERS:
        members = [(tuple(stem_words(words(m))), m) for m in cluster]
        for key, _ in members:
            if not key:
                continue
            bucket = table.setdefault(key, {})
            for other_key, other in members:
                for stem in other_key:
                    if stem not in key:
                        bucket.setdefault(stem, other)
    return {k: tuple(v.items()) for k, v in table.items()}


def expand_related(pairs: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Related stems for a query's `(stem, word)` pairs: stem → (member word, query word).

    Single words and two-word phrases ("package manager") are looked up; stems already in
    the query are never added again.
    """
    table = _related_table()
    present = {stem for stem, _ in pairs}
    out: dict[str, tuple[str, str]] = {}
    grams: list[tuple[tuple[str, ...], str]] = [((stem,), word) for stem, word in pairs]
    grams += [((a[0], b[0]), f"{a[1]} {b[1]}") for a, b in zip(pairs, pairs[1:], strict=False)]
    for key, trigger in grams:
        for stem, member in table.get(key, ()):
            if stem not in present and stem not in out:
                out[stem] = (member, trigger)
    return out


def _tools_verdict(doc: RankDocument, tools: Mapping[str, set[str]]) -> ToolsVerdict | None:
    """Claude Code's tools rule, judged from words: warnings stay, usage docs go."""
    if not tools:
        return None
    surface = doc.surface_words
    for tool, terms in tools.items():
        if not terms & surface:
            continue
        if doc.type == "feedback" or surface & WARNING_WORDS:
            return ToolsVerdict(tool, "warning")
        if doc.type == "reference" or surface & DOCS_WORDS:
            return ToolsVerdict(tool, "usage")
    return None
