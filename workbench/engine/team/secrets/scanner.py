"""Secret scanning: Claude Code's answer (`scan_for_secrets`) and located findings.

How a scan runs:
1. A prefilter (hyperscan, or `re` without it) names candidate lines per rule.
2. Each candidate line is confirmed with the exact rule, searching from the newline before it to
   just past the newline after it. No match of any rule but `private-key` reaches past those
   newlines, and a rule's search resumes where its previous match ended, so the matches found
   are exactly those of the rule run over the whole text (`finditer`, JavaScript's global
   `replace`), whichever prefilter ran.
3. `private-key` spans lines. It is tried at every `-----BEGIN`, and in the JavaScript view of
   the text (characters beyond U+FFFF as two UTF-16 units) so that its 64-unit body counts what
   Claude Code counts. Every other rule matches ASCII only, where the two views agree.

Nothing here returns, logs or stores matched text: findings carry positions, a fingerprint and
a placeholder verdict computed while the match is in hand.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.engine.team.secrets.prefilter import Candidates, get_prefilter, private_key_headers
from workbench.engine.team.secrets.rules import RULES

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_PK_HEADER = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE | re.ASCII
)
_PK_FOOTER = re.compile(
    r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE | re.ASCII
)


@dataclass(frozen=True)
class SecretMatch:
    """A rule that matched somewhere in a text. Deliberately holds no matched text."""

    rule_id: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"rule_id": self.rule_id, "label": self.label}


@dataclass(frozen=True)
class SecretFinding:
    """One located secret: where it is and what it looks like, never what it is."""

    rule_id: str
    label: str
    path: str
    line: int
    """1-based line of the secret's first character."""
    column: int
    """1-based column (in characters) of the secret's first character."""
    end_line: int
    end_column: int
    """1-based column just past the secret's last character (exclusive)."""
    start: int
    """Character offset of the secret in the scanned text."""
    end: int
    fingerprint: str
    likely_placeholder: bool
    placeholder_reason: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "rule_id": self.rule_id,
            "label": self.label,
            "fingerprint": self.fingerprint,
            "likely_placeholder": self.likely_placeholder,
            "placeholder_reason": self.placeholder_reason,
        }


# --- the JavaScript view of a text --------------------------------------------------------


@dataclass(frozen=True)
class JsView:
    """A text as UTF-16 code units (astral characters split into surrogate pairs)."""

    text: str
    astral: tuple[int, ...] = ()
    """View indexes of the high surrogates that stand for astral characters."""

    def to_original(self, index: int) -> int:
        """The character index in the original text for a view index."""
        if not self.astral:
            return index
        return index - bisect.bisect_left(self.astral, index)

    def restore(self, text: str) -> str:
        """Turn a (possibly edited) view back into an ordinary string."""
        if not self.astral:
            return text
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _surrogates(char: str) -> str:
    code = ord(char) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def js_view(text: str) -> JsView:
    """The view regexes run on; the text itself unless it has characters beyond U+FFFF."""
    if text.isascii():
        return JsView(text)
    positions = [m.start() for m in _ASTRAL.finditer(text)]
    if not positions:
        return JsView(text)
    view = _ASTRAL.sub(lambda m: _surrogates(m.group()), text)
    return JsView(view, tuple(p + k for k, p in enumerate(positions)))


# --- confirmation ---------------------------------------------------------------------------

Span = tuple[int, int, int]
"""(rule index, start, end) of a secret in the scanned text."""


def _line_windows(text: str, positions: list[int]) -> list[tuple[int, int]]:
    """For each candidate line: from the newline before it to just past the newline after it."""
    size = len(text)
    windows: list[tuple[int, int]] = []
    line_end = -1
    for at in positions:
        if at < line_end:
            continue  # same line as the previous candidate
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        if line_end == -1:
            line_end = size
        windows.append((line_start - 1 if line_start else 0, min(line_end + 1, size)))
    return windows


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    """Capture group 1 when the rule has one (the token without its boundary), else the match."""
    if match.re.groups and match.start(1) != -1:
        return match.span(1)
    return match.span()


def _confirm_on_lines(
    index: int, text: str, windows: list[tuple[int, int]], first_only: bool
) -> list[Span]:
    """The rule's matches in the windows, resuming each search where the last match ended."""
    search = RULES[index].regex.search
    found: list[Span] = []
    resume = 0
    for window_start, window_end in windows:
        at = max(window_start, resume)
        while at < window_end:
            match = search(text, at, window_end)
            if match is None:
                break
            found.append((index, *_secret_span(match)))
            if first_only:
                return found
            resume = at = match.end()
    return found


class _FooterCursor:
    """Answers "is there a private-key footer at or after x?" for increasing x, in linear total
    time. Only a complete footer counts, so a text full of `-----END CERTIFICATE-----` lines
    cannot make each header search the rest of the text in vain."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.next_footer = -2  # -2: not looked yet, -1: none left

    def any_from(self, start: int) -> bool:
        if self.next_footer == -1:
            return False
        if self.next_footer >= start:
            return True
        text = self.text
        at = text.find("-----", start)
        while at != -1:
            word = text[at + 5 : at + 8]
            if word.isascii() and word.lower() == "end" and _PK_FOOTER.match(text, at):
                self.next_footer = at
                return True
            at = text.find("-----", at + 1)
        self.next_footer = -1
        return False


# A private-key header is at least `-----BEGIN` + `PRIVATE KEY-----` long, then 64 of body.
_SHORTEST_BEFORE_FOOTER = len("-----BEGIN") + len("PRIVATE KEY-----") + 64


def _private_key_spans(
    index: int, jsv: JsView, first_only: bool, headers: list[int]
) -> tuple[list[Span], int]:
    """`private-key` matches in a view, tried at each header in turn (as `finditer` would).

    Also returns the first header that is well formed yet found no match (or -1): the place
    from which counting the body differently could change the answer.
    """
    view = jsv.text
    match_at = RULES[index].regex.match
    footers = _FooterCursor(view)
    found: list[Span] = []
    failed_at = -1
    resume = 0
    for number, header in enumerate(headers):
        if header < resume:
            continue
        if not footers.any_from(header + _SHORTEST_BEFORE_FOOTER):
            # No footer far enough for this header, so none for any later one either.
            if failed_at == -1:
                failed_at = next((h for h in headers[number:] if _PK_HEADER.match(view, h)), -1)
            break
        match = match_at(view, header)
        if match is None:
            if failed_at == -1 and _PK_HEADER.match(view, header):
                failed_at = header
            continue
        found.append((index, jsv.to_original(match.start()), jsv.to_original(match.end())))
        if first_only:
            break
        resume = match.end()
    return found, failed_at


def _confirm_private_key(
    index: int, text: str, windows: list[tuple[int, int]], first_only: bool
) -> list[Span]:
    """`private-key` matches with the body counted in UTF-16 units, as JavaScript counts it.

    Only headers on candidate lines are tried: elsewhere the rule's core does not match, so
    neither can the rule. Counting differs only where characters beyond U+FFFF are involved,
    so the text is matched as it is unless such a character lies inside a match or after a
    well-formed header that found none; then every header is tried again in the JavaScript
    view (rare, and exact).
    """
    headers = [at for start, end in windows for at in private_key_headers(text, start, end)]
    found, failed_at = _private_key_spans(index, JsView(text), first_only, headers)
    if text.isascii():
        return found
    touched = failed_at != -1 and _ASTRAL.search(text, failed_at)
    if touched or any(_ASTRAL.search(text, start, end) for _index, start, end in found):
        view = js_view(text)
        return _private_key_spans(index, view, first_only, private_key_headers(view.text))[0]
    return found


def _rule_spans(text: str, candidates: Candidates, first_only: bool) -> list[Span]:
    out: list[Span] = []
    for index in sorted(candidates):
        windows = _line_windows(text, candidates[index])
        if RULES[index].multiline:
            out.extend(_confirm_private_key(index, text, windows, first_only))
        else:
            out.extend(_confirm_on_lines(index, text, windows, first_only))
    return out


def _matches(text: str, candidates: Candidates) -> list[SecretMatch]:
    return [
        SecretMatch(RULES[index].id, RULES[index].label)
        for index, _start, _end in _rule_spans(text, candidates, first_only=True)
    ]


def _findings(text: str, candidates: Candidates, path: str) -> list[SecretFinding]:
    if not candidates:
        return []
    # Here: hashlib (OpenSSL) and the placeholder tables are 5 ms that a scan finding no
    # candidate (a listing's team files, nearly always) never needs.
    from workbench.engine.team.secrets.fingerprint import fingerprint
    from workbench.engine.team.secrets.placeholder import placeholder_reason

    spans = sorted(_rule_spans(text, candidates, first_only=False), key=_text_order)
    findings: list[SecretFinding] = []
    line = 1
    counted_to = 0
    for index, start, end in spans:
        rule = RULES[index]
        line += text.count("\n", counted_to, start)
        counted_to = start
        secret = text[start:end]
        reason = placeholder_reason(rule, secret)
        findings.append(
            SecretFinding(
                rule_id=rule.id,
                label=rule.label,
                path=path,
                line=line,
                column=start - text.rfind("\n", 0, start),
                end_line=line + text.count("\n", start, end),
                end_column=end - text.rfind("\n", 0, end),
                start=start,
                end=end,
                fingerprint=fingerprint(rule.id, path, secret),
                likely_placeholder=reason is not None,
                placeholder_reason=reason,
            )
        )
    return findings


def _text_order(span: Span) -> tuple[int, int]:
    return span[1], span[0]


# --- public API -----------------------------------------------------------------------------


def scan_for_secrets(text: str, *, backend: str | None = None) -> list[SecretMatch]:
    """Every rule that matches `text`, at most once each, in rule order (Claude Code's answer)."""
    return _matches(text, get_prefilter(backend).candidates(text))


def scan_many(texts: Sequence[str], *, backend: str | None = None) -> list[list[SecretMatch]]:
    """`scan_for_secrets` for many texts, with one prefilter pass over all of them."""
    candidates = get_prefilter(backend).candidates_many(texts)
    return [_matches(text, found) for text, found in zip(texts, candidates, strict=True)]


def find_secrets(text: str, *, path: str = "", backend: str | None = None) -> list[SecretFinding]:
    """Every match of every rule, located, in text order (rule order on ties)."""
    return _findings(text, get_prefilter(backend).candidates(text), path)


def find_secrets_many(
    items: Sequence[tuple[str, str]], *, backend: str | None = None
) -> list[list[SecretFinding]]:
    """`find_secrets` for many (path, text) pairs, with one prefilter pass over all of them."""
    texts = [text for _path, text in items]
    candidates = get_prefilter(backend).candidates_many(texts)
    return [
        _findings(text, found, path) for (path, text), found in zip(items, candidates, strict=True)
    ]


def naive_matches(text: str) -> list[Span]:
    """Reference answer for tests and benchmarks: each rule's `finditer` over the whole text,
    one rule at a time (private keys in the JavaScript view), as secret spans."""
    jsv = js_view(text)
    out: list[Span] = []
    for index, rule in enumerate(RULES):
        subject = jsv.text if rule.multiline else text
        for match in rule.regex.finditer(subject):
            start, end = _secret_span(match)
            if rule.multiline:
                start, end = jsv.to_original(start), jsv.to_original(end)
            out.append((index, start, end))
    return out
