"""Finding where secrets might be, fast: a hyperscan database, or plain `re` without it.

A prefilter never decides that something is a secret. It reports, per rule, positions of
matches of the rule's `core` (the token with its boundaries left off), and the scanner confirms
each candidate line with the exact rule. Because every real match contains a core match on the
same line, both prefilters lead to identical findings; they differ only in speed.

Choose the engine with `backend`: `auto` (hyperscan when importable and worth compiling, see
`AutoPrefilter`), `hyperscan` (required) or `re` (force the fallback). Front ends map
`WORKBENCH_SECRET_ENGINE` onto it; `set_default_backend` sets it for the whole process.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Literal, Protocol, cast

from workbench.engine.errors import UserInputError
from workbench.engine.team.secrets.rules import RULES, SecretRule

Backend = Literal["auto", "hyperscan", "re"]
BACKENDS: tuple[str, ...] = ("auto", "hyperscan", "re")
ENV_VAR = "WORKBENCH_SECRET_ENGINE"

Candidates = dict[int, list[int]]
"""Rule index → ascending positions (string indexes) that lie on a candidate line."""


class Prefilter(Protocol):
    """Reports, per rule, where a match could be."""

    @property
    def name(self) -> str: ...

    def candidates(self, text: str) -> Candidates: ...

    def candidates_many(self, texts: Sequence[str]) -> list[Candidates]: ...


def private_key_headers(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Every index in `start`..`end` where `-----BEGIN` (any case) starts.

    `str.find` on the dashes is far faster than a case-insensitive regex, and occurrences
    cannot overlap, so this lists every place a private-key match could start.
    """
    found: list[int] = []
    stop = len(text) if end is None else end
    at = text.find("-----", start, stop)
    while at != -1:
        word = text[at + 5 : at + 10]
        if word.isascii() and word.lower() == "begin":
            found.append(at)
        at = text.find("-----", at + 1, stop)
    return found


class RegexPrefilter:
    """The pure-`re` prefilter: keyword gates, then the core regex or keyword positions."""

    name = "re"

    def __init__(self, rules: tuple[SecretRule, ...] = RULES) -> None:
        self._plan = [(index, rule, self._locator(rule)) for index, rule in enumerate(rules)]
        # No locator finds anything without one of its rule's keywords in the text (in any
        # case, for the case-blind rules) or, for private keys, `-----BEGIN` in any case. A
        # keyword in the text is in its lower-cased copy too, so one look for all of them
        # there settles most texts at a third of the cost of asking every rule.
        keywords = {keyword.lower() for rule in rules for keyword in rule.keywords}
        self._any_keyword = tuple(sorted(keywords | {"-----begin"}))

    @staticmethod
    def _locator(rule: SecretRule) -> Callable[[str, Callable[[], str]], list[int]]:
        # Each core is compiled when a text first holds its keywords (`rule.core_regex`):
        # all of them cost 5 ms, which a listing whose team files hold none never pays.
        keywords = rule.keywords
        if rule.multiline:
            return lambda text, _lowered: private_key_headers(text)
        if rule.ignore_case:
            # Gate on a lower-cased copy (made once per scan), then let the core locate.
            def case_blind(text: str, lowered: Callable[[], str]) -> list[int]:
                if not any(k in lowered() for k in keywords):
                    return []
                return [m.start() for m in rule.core_regex.finditer(text)]

            return case_blind
        if rule.core[0].isalnum() or rule.core[0] == "-":
            # sre searches a literal prefix quickly, so the core locates precisely.
            def by_core(text: str, _lowered: Callable[[], str]) -> list[int]:
                if not any(k in text for k in keywords):
                    return []
                return [m.start() for m in rule.core_regex.finditer(text)]

            return by_core

        # A core that starts with a character class is slow in sre: locate its keywords.
        def by_keyword(text: str, _lowered: Callable[[], str]) -> list[int]:
            found: list[int] = []
            for keyword in keywords:
                at = text.find(keyword)
                while at != -1:
                    found.append(at)
                    at = text.find(keyword, at + 1)
            found.sort()
            return found

        return by_keyword

    def candidates(self, text: str) -> Candidates:
        lowered = text.lower()
        if not self.may_match(lowered):
            return {}
        return self.located(text, lowered)

    def may_match(self, lowered: str) -> bool:
        """Whether any rule may have a candidate in the text whose lower-cased copy is
        `lowered` (False: none has)."""
        for keyword in self._any_keyword:  # a loop: cheaper than any() on a generator
            if keyword in lowered:
                return True
        return False

    def located(self, text: str, lowered: str) -> Candidates:
        """Every rule's candidates in `text` (`lowered` is its lower-cased copy)."""
        out: Candidates = {}
        for index, _rule, locate in self._plan:
            positions = locate(text, lambda: lowered)
            if positions:
                out[index] = positions
        return out

    def candidates_many(self, texts: Sequence[str]) -> list[Candidates]:
        return [self.candidates(text) for text in texts]


class HyperscanPrefilter:
    """All 36 cores compiled into one hyperscan block-mode database, scanned in one pass."""

    name = "hyperscan"

    def __init__(self, rules: tuple[SecretRule, ...] = RULES) -> None:
        import hyperscan

        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        expressions = [rule.core.encode("ascii") for rule in rules]
        flags = [hyperscan.HS_FLAG_CASELESS if rule.ignore_case else 0 for rule in rules]
        self._db.compile(expressions=expressions, ids=list(range(len(rules))), flags=flags)
        # The database's own scratch is the fastest to scan with but serves one scan at a time;
        # a thread that finds it busy scans with a scratch of its own.
        self._lock = threading.Lock()
        self._local = threading.local()

    def _scan(self, data: bytes) -> list[tuple[int, int]]:
        """(rule index, offset of the last byte) of every core match in `data`."""
        hits: list[tuple[int, int]] = []
        if self._lock.acquire(blocking=False):
            try:
                self._db.scan(data, match_event_handler=_on_match, context=hits)
            finally:
                self._lock.release()
            return hits
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._db.scratch.clone()
        self._db.scan(data, match_event_handler=_on_match, context=hits, scratch=scratch)
        return hits

    def candidates(self, text: str) -> Candidates:
        hits = self._scan(_one_byte_per_character(text))
        return _group(hits) if hits else {}

    def candidates_many(self, texts: Sequence[str]) -> list[Candidates]:
        """One scan over all texts joined by newlines (no core match crosses a newline)."""
        starts: list[int] = []
        offset = 0
        for text in texts:
            starts.append(offset)
            offset += len(text) + 1
        # Encode one by one: joining first would widen every text to the widest one's width.
        hits = self._scan(b"\n".join(_one_byte_per_character(text) for text in texts))
        out: list[Candidates] = [{} for _ in texts]
        if not hits:
            return out
        per_text: dict[int, list[tuple[int, int]]] = {}
        for rule, at in hits:
            which = bisect.bisect_right(starts, at) - 1
            per_text.setdefault(which, []).append((rule, at - starts[which]))
        for which, text_hits in per_text.items():
            out[which] = _group(text_hits)
        return out


def _one_byte_per_character(text: str) -> bytes:
    """The text as bytes whose offsets are its string indexes.

    Every core is ASCII, so only ASCII characters need to survive: Latin-1 keeps them (and
    turns other Latin-1 letters into bytes no core matches), and anything beyond becomes `?`,
    which no core contains either. Cheaper than UTF-8, and no offsets to map back.
    """
    return text.encode("latin-1", "replace")


def _on_match(rule: int, _start: int, end: int, _flags: int, hits: object) -> None:
    # `hits` is the list `_scan` passes as the scan's context, which hyperscan types as object.
    cast("list[tuple[int, int]]", hits).append((rule, end - 1))


def _group(hits: list[tuple[int, int]]) -> Candidates:
    """Hits (rule, offset) as ascending positions per rule."""
    out: Candidates = {}
    for rule, at in hits:
        out.setdefault(rule, []).append(at)
    for positions in out.values():
        positions.sort()
    return out


class AutoPrefilter:
    """hyperscan once the work pays for compiling its database, the `re` prefilter before.

    Compiling the database takes a tenth of a second or more, longer than the fallback spends
    on a few memory files, so small one-off scans (a write guard check, one file) stay with
    `re`; a large input, or a process that has scanned enough text already, moves to hyperscan
    for good. Findings are identical either way.
    """

    SWITCH_AFTER_CHARS = 1_000_000

    def __init__(self) -> None:
        self._scanned = 0
        self._fast: HyperscanPrefilter | None = None

    @property
    def name(self) -> str:
        return "hyperscan" if self._fast is not None else "re"

    def _pick(self, size: int) -> Prefilter:
        if self._fast is None:
            self._scanned += size
            if self._scanned < self.SWITCH_AFTER_CHARS or not hyperscan_available():
                return _regex_prefilter()
            self._fast = _hyperscan_prefilter()
        return self._fast

    def candidates(self, text: str) -> Candidates:
        return self._pick(len(text)).candidates(text)

    def candidates_many(self, texts: Sequence[str]) -> list[Candidates]:
        return self._pick(sum(len(t) for t in texts)).candidates_many(texts)


@lru_cache(maxsize=1)
def hyperscan_available() -> bool:
    """Whether the hyperscan module imports and compiles the rule database here."""
    try:
        _hyperscan_prefilter()
    except Exception:  # noqa: BLE001 - any failure means "use the fallback"
        return False
    return True


@lru_cache(maxsize=1)
def _hyperscan_prefilter() -> HyperscanPrefilter:
    return HyperscanPrefilter()


@lru_cache(maxsize=1)
def _regex_prefilter() -> RegexPrefilter:
    return RegexPrefilter()


@lru_cache(maxsize=1)
def _auto_prefilter() -> AutoPrefilter:
    return AutoPrefilter()


def get_prefilter(backend: str | None = None) -> Prefilter:
    """The prefilter for `backend`; None means the process default (see `set_default_backend`)."""
    if backend is None:
        backend = _default_backend
    prefilter = _chosen.get(backend)
    if prefilter is None:
        prefilter = _chosen[backend] = _choose(backend)
    return prefilter


def set_default_backend(backend: str) -> None:
    """Choose the engine for calls that name none, e.g. `set_default_backend("re")` to force
    the fallback everywhere (the write guard and sync included)."""
    global _default_backend
    _choose(backend)  # refuse an unknown or unavailable engine now, not at the next scan
    _default_backend = backend


_chosen: dict[str | None, Prefilter] = {}
_default_backend = "auto"


def _choose(backend: str | None) -> Prefilter:
    choice = (backend or "auto").strip().lower()
    if choice not in BACKENDS:
        raise UserInputError(
            f"unknown secret engine {backend!r}: choose one of {', '.join(BACKENDS)}"
        )
    if choice == "re":
        return _regex_prefilter()
    if choice == "hyperscan":
        if not hyperscan_available():
            raise UserInputError("the hyperscan secret engine is not available on this machine")
        return _hyperscan_prefilter()
    return _auto_prefilter()


def backend_from_env(env: Mapping[str, str] | None) -> str:
    """The backend named by `WORKBENCH_SECRET_ENGINE` in `env`, or `auto`."""
    value = env.get(ENV_VAR) if env is not None else None
    return value or "auto"
