"""The offline recall ranker: BM25 per field, stemming, the tools rule and freshness.

Each memory is indexed as five fields (description, name, file path, type and a bounded peek
at the body), each its own BM25 index (bm25s) over Snowball-stemmed words (PyStemmer). A
query's score is the weighted sum of the field scores, adjusted by the recently-used-tools
rule and a mild freshness factor. Scores keep their parts, so every result can say which
words matched where.
"""

from __future__ import annotations

import math
import re
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
BM25_K1 = 1.2
BM25_B = 0.75
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


def phrase_term(stems: Sequence[str]) -> str:
    """The index term of a stemmed phrase: its stems joined by a space.

    A stem never holds a space, so a phrase's term cannot be mistaken for a word's.
    """
    return " ".join(stems)


def index_terms(text: str) -> list[tuple[str, str]]:
    """`(term, surface)` pairs the ranker indexes for `text`, in order.

    The meaningful words, as `analyze` gives them, then every related phrase of the
    thesaurus ("times out", "on-call") whose words stand together in `text` after the
    same stemming, stopwords included ("timed out" is "times out"; "times" alone is
    not). A phrase's surface is the text as written there ("Timed  out" → 'timed out').
    """
    every = words(text)
    stems = stem_words(every)
    terms = [(s, w) for s, w in zip(stems, every, strict=True) if w not in STOPWORDS]
    phrases = _related_phrases()
    for size in sorted({len(p) for p in phrases}):
        for start in range(len(stems) - size + 1):
            key = tuple(stems[start : start + size])
            if key in phrases:
                terms.append((phrase_term(key), _phrase_surface(text, every[start : start + size])))
    return terms


def _phrase_surface(text: str, parts: Sequence[str]) -> str:
    """How the words `parts` are written in `text`, lower-case, spacing collapsed."""
    pattern = "[^a-z0-9]*".join(re.escape(p) for p in parts)
    found = re.search(pattern, text, re.IGNORECASE)
    return " ".join(found.group(0).lower().split()) if found else " ".join(parts)


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
    _doc_terms: dict[str, list[dict[str, str]]] = field(default_factory=dict, repr=False)
    """Field → per document, each indexed term → how it is first written there."""
    _phrase_tf: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict, repr=False)
    """Field → related phrase term → document position → how often the phrase stands there."""
    _lengths: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Field → each document's length in words, as bm25s counts it."""
    _positions: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # Deferred: a noticeable import, needed only when recall runs offline. bm25s ships no
        # type information.
        import bm25s  # type: ignore[import-untyped]

        self._positions = {doc.key: i for i, doc in enumerate(self.documents)}
        for name in FIELD_WEIGHTS:
            analyzed = [index_terms(doc.field_text(name)) for doc in self.documents]
            self._doc_terms[name] = [_first_surfaces(terms) for terms in analyzed]
            # Words go to bm25s; phrases are counted apart, so a phrase's words are not
            # counted twice in the memory's length (see `_phrase_scores`).
            tokenized = [[t for t, _ in terms if " " not in t] for terms in analyzed]
            phrase_tf: dict[str, dict[int, int]] = {}
            for pos, terms in enumerate(analyzed):
                for term, _ in terms:
                    if " " in term:
                        counts = phrase_tf.setdefault(term, {})
                        counts[pos] = counts.get(pos, 0) + 1
            self._phrase_tf[name] = phrase_tf
            self._lengths[name] = [len(tokens) for tokens in tokenized]
            if not any(tokenized):
                continue  # no document has words here (bm25s cannot index an empty field)
            index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
            index.index(tokenized, show_progress=False)
            self._indexes[name] = index

    def __len__(self) -> int:
        return len(self.documents)

    def _phrase_scores(self, name: str, terms: Sequence[str]) -> np.ndarray | None:
        """BM25 scores of related phrases in field `name`, as bm25s scores a word.

        bm25s's defaults (the Lucene variant): idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
        times tf / (tf + k1 * (1 - b + b * length / average length)), where the lengths are
        in words, the same lengths the word scores use. None when no memory holds any.
        """
        known = self._phrase_tf.get(name, {})
        found = [known[term] for term in terms if term in known]
        lengths = self._lengths.get(name, [])
        average = sum(lengths) / len(lengths) if lengths else 0.0
        if not found or average <= 0:
            return None
        import numpy as np

        out = np.zeros(len(self.documents), dtype=np.float64)
        count = len(self.documents)
        for tfs in found:
            idf = math.log(1 + (count - len(tfs) + 0.5) / (len(tfs) + 0.5))
            for pos, tf in tfs.items():
                norm = BM25_K1 * ((1 - BM25_B) + BM25_B * lengths[pos] / average)
                out[pos] += idf * tf / (tf + norm)
        return out

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
        pairs = analyze(query, keep_stopwords=True)
        surface_by_stem: dict[str, str] = {}
        for stem, word in pairs:
            if word not in STOPWORDS:
                surface_by_stem.setdefault(stem, word)
        stems = list(surface_by_stem)
        related = expand_related(pairs)
        field_arrays: dict[str, np.ndarray] = {}
        related_arrays: dict[str, np.ndarray] = {}
        for name, index in self._indexes.items():
            if stems:
                field_arrays[name] = index.get_scores(stems)
            near_words = [t for t in related if " " not in t]
            near = index.get_scores(near_words) if near_words else None
            phrases = self._phrase_scores(name, [t for t in related if " " in t])
            if near is not None and phrases is not None:
                near = near + phrases
            near = near if near is not None else phrases
            if near is not None:
                related_arrays[name] = near
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
                doc_terms = self._doc_terms[name][pos]
                hit = tuple(surface_by_stem[s] for s in stems if s in doc_terms)
                if hit:
                    matches[name] = hit
                # Quoted as the memory writes it ('timed out'), not as the thesaurus does.
                near_hit = tuple(
                    (doc_terms[term], trigger)
                    for term, (_, trigger) in related.items()
                    if term in doc_terms
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


def _first_surfaces(terms: Iterable[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for term, surface in terms:
        out.setdefault(term, surface)
    return out


@lru_cache(maxsize=1)
def _related_table() -> Mapping[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Stemmed member → `(term, member word)` of the other members of its clusters.

    A one-word member's term is its stem; a phrase's is `phrase_term` of its stems, so it
    matches only a memory where those words stand together (see `index_terms`).
    """
    from workbench.engine.recall.thesaurus import CLUSTERS

    table: dict[tuple[str, ...], dict[str, str]] = {}
    for cluster in CLUSTERS:
        members = [(tuple(stem_words(words(m))), m) for m in cluster]
        for key, _ in members:
            if not key:
                continue
            bucket = table.setdefault(key, {})
            for other_key, other in members:
                if not other_key or other_key == key:
                    continue
                if len(other_key) == 1 and other_key[0] in key:
                    continue  # "time" is no relation of "time zone": it is in it
                bucket.setdefault(phrase_term(other_key), other)
    return {k: tuple(v.items()) for k, v in table.items()}


@lru_cache(maxsize=1)
def _related_phrases() -> frozenset[tuple[str, ...]]:
    """The stemmed thesaurus members of more than one word ("times out" → time, out)."""
    return frozenset(key for key in _related_table() if len(key) > 1)


def expand_related(pairs: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Related terms for a query's `(stem, word)` pairs: term → (member word, query word).

    `pairs` keep the query's stopwords, so a phrase such as "times out" is seen whole.
    Meaningful single words and the thesaurus's phrases are looked up; terms already in
    the query (its words' stems, its phrases) are never added again. A phrase's term
    matches only where its words stand together (see `index_terms`).
    """
    table = _related_table()
    phrases = _related_phrases()
    sizes = sorted({len(p) for p in phrases})
    grams: list[tuple[tuple[str, ...], str]] = [
        ((stem,), word) for stem, word in pairs if word not in STOPWORDS
    ]
    for size in sizes:
        for start in range(len(pairs) - size + 1):
            window = pairs[start : start + size]
            key = tuple(stem for stem, _ in window)
            if key in phrases:
                grams.append((key, " ".join(word for _, word in window)))
    present = {phrase_term(key) for key, _ in grams}
    out: dict[str, tuple[str, str]] = {}
    for key, trigger in grams:
        for term, member in table.get(key, ()):
            if term not in present and term not in out:
                out[term] = (member, trigger)
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
