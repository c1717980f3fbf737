"""The line Claude Code shows under the prompt: the gauge, coloured by the threshold it reached.

Claude Code runs the status-line command after each message and sends a JSON payload on
stdin. Recent releases include the live figures (`context_window`: the window size and the
last call's usage), so the line needs no transcript at all; older ones send only the
transcript path, and the count then comes from the transcript's end (never the whole file).

The format is a template of named fields (`FIELDS`), e.g. `{model} {tokens}/{auto_compact}`.
Colours are plain ANSI escapes around the gauge fields: green below the warning threshold,
yellow from it, red from auto-compact, white on red at the blocking limit.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

from workbench.engine.context.thresholds import Thresholds, TokenWarningState, token_warning_state
from workbench.engine.context.views import FIELDS, payload_project  # public: CLI help
from workbench.engine.errors import UserInputError
from workbench.engine.records import Record

# SGR colours per level; the badge has its own.
_COLOURS = {
    "ok": "32",
    "warning": "33",
    "autocompact": "31",
    "blocking": "1;97;41",
}
_BADGE_COLOUR = "35"
_GAUGE_FIELDS = frozenset({"tokens", "percent", "left", "to_go", "state"})
_SEPARATORS = frozenset("·|•,;:-")
_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def short_tokens(value: int) -> str:
    """`72k`, `1.2M`, `950`."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    if value >= 1_000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    return str(value)


class PayloadFigures(Record):
    """What the status-line payload itself says about the context."""

    model_id: str | None
    model_name: str | None
    window: int | None
    """`context_window.context_window_size`, when sent."""
    used: int | None
    """The last call's usage total (input, both cache figures, output), when sent."""
    transcript: str | None
    project_dir: str | None
    version: str | None = None
    """The `version` of the Claude Code that sent the payload, when it says."""


def _positive_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def read_payload(payload: Mapping[str, Any]) -> PayloadFigures:
    """The fields the line uses, each ignored when missing or of the wrong type."""
    model = payload.get("model")
    model_id = model_name = None
    if isinstance(model, Mapping):
        model_id = model.get("id") if isinstance(model.get("id"), str) else None
        name = model.get("display_name")
        model_name = name if isinstance(name, str) and name.strip() else None
    elif isinstance(model, str):
        model_id = model
    window = used = None
    figures = payload.get("context_window")
    if isinstance(figures, Mapping):
        window = _positive_int(figures.get("context_window_size"))
        usage = figures.get("current_usage")
        if isinstance(usage, Mapping):
            parts = [usage.get(key) for key in _USAGE_KEYS]
            counts = [p for p in parts if isinstance(p, int) and not isinstance(p, bool)]
            if counts and all(c >= 0 for c in counts):
                used = sum(counts)
    path = payload.get("transcript_path")
    version = payload.get("version")
    return PayloadFigures(
        model_id=model_id.strip() or None if isinstance(model_id, str) else None,
        model_name=model_name,
        window=window,
        used=used,
        transcript=path if isinstance(path, str) and path else None,
        project_dir=payload_project(payload),
        version=version.strip() or None if isinstance(version, str) else None,
    )


class StatusFigures(Record):
    """Everything one status line can show."""

    model: str
    """Display name, else id."""
    model_id: str
    used: int
    source: str
    """`payload` (Claude Code's own figures), `transcript` (read from its end) or `new`."""
    thresholds: Thresholds
    state: TokenWarningState
    badge: str | None = None

    @property
    def level(self) -> str:
        """`ok`, `warning`, `autocompact` or `blocking`: which colour the gauge takes."""
        if self.state.at_blocking:
            return "blocking"
        if self.state.above_autocompact:
            return "autocompact"
        if self.state.above_warning:
            return "warning"
        return "ok"

    @property
    def target(self) -> int:
        """What the gauge counts towards: auto-compact, or the effective window when off."""
        return self.thresholds.warning_base

    def values(self) -> dict[str, str]:
        """Each field's text, uncoloured."""
        t = self.thresholds
        target = self.target
        percent = round(self.used / target * 100) if target > 0 else 0
        if self.source == "new":
            state = "new session"
        elif self.level == "blocking":
            state = "blocking"
        elif self.level == "autocompact":
            state = "auto-compact due"
        elif self.level == "warning" and t.auto_compact_enabled:
            state = f"{self.state.percent_left}% until auto-compact"
        elif self.level == "warning":
            state = f"context low: {self.state.percent_left}% left"
        else:
            state = f"{self.state.percent_left}% left"
        return {
            "model": self.model,
            "tokens": short_tokens(self.used),
            "auto_compact": short_tokens(target),
            "window": short_tokens(t.context_window),
            "percent": f"{percent}%",
            "left": f"{self.state.percent_left}%",
            "to_go": short_tokens(max(0, target - self.used)),
            "state": state,
            "badge": self.badge or "",
            "source": self.source,
        }

    def to_json(self) -> dict[str, Any]:
        t = self.thresholds
        return {
            "model": self.model,
            "model_id": self.model_id,
            "used": self.used,
            "source": self.source,
            "level": self.level,
            "context_window": t.context_window,
            "context_window_source": t.context_window_source,
            "effective_window": t.effective_window,
            "auto_compact_enabled": t.auto_compact_enabled,
            # The gauge's shape: a rung the release does not have is null, not a number.
            "thresholds": t.thresholds_json(),
            "percent_left": self.state.percent_left,
            "badge": self.badge,
        }


def figures(
    used: int,
    thresholds: Thresholds,
    *,
    model_id: str,
    model_name: str | None,
    source: str,
    badge: str | None,
) -> StatusFigures:
    """The figures for a count on a ladder."""
    return StatusFigures(
        model=model_name or model_id,
        model_id=model_id,
        used=used,
        source=source,
        thresholds=thresholds,
        state=token_warning_state(used, thresholds),
        badge=badge,
    )


def check_format(fmt: str) -> list[str]:
    """The field names `fmt` uses; a one-line error for an unknown field or a bad brace."""
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError as exc:
        raise UserInputError(f"--format is not a valid template ({exc})") from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in FIELDS:
            known = ", ".join(FIELDS)
            raise UserInputError(f"--format names an unknown field {{{name}}} (known: {known})")
        if spec or conversion:
            raise UserInputError(f"--format field {{{name}}} takes no format spec")
        names.append(name)
    return names


def render(fmt: str, status: StatusFigures, *, color: bool) -> str:
    """The line for `fmt` (checked first), with ANSI colours when `color` is set."""
    check_format(fmt)
    values = status.values()
    level_colour = _COLOURS[status.level]

    def paint(name: str) -> str:
        text = values[name]
        if not color or not text:
            return text
        if name in _GAUGE_FIELDS:
            return f"\x1b[{level_colour}m{text}\x1b[0m"
        if name == "badge":
            return f"\x1b[{_BADGE_COLOUR}m{text}\x1b[0m"
        return text

    out = []
    for literal, name, _, _ in string.Formatter().parse(fmt):
        out.append(literal)
        if name is not None:
            out.append(paint(name))
    return tidy("".join(out))


def tidy(line: str) -> str:
    """One line without the separators an empty field leaves behind: runs of spaces made one,
    whitespace and separators trimmed from both ends. (String methods, not patterns: compiling
    them was a millisecond and a half of every call.)"""
    line = " ".join(part for part in " ".join(line.splitlines()).split(" ") if part)
    start, end = 0, len(line)
    while end > start and (line[end - 1].isspace() or line[end - 1] in _SEPARATORS):
        end -= 1
    while start < end and (line[start].isspace() or line[start] in _SEPARATORS):
        start += 1
    return line[start:end]


def index_badge(truncation_of: Callable[[bool], Any]) -> str | None:
    """`MEMORY.md 234/200 lines` when an index does not load whole (private, then team)."""
    parts = []
    for team in (False, True):
        cut = truncation_of(team)
        if cut is None or not cut.truncated:
            continue
        # Only here: the index module (and its frontmatter parser) costs the common case.
        from workbench.engine.memories.index import MAX_ENTRYPOINT_LENGTH, MAX_ENTRYPOINT_LINES

        name = "team MEMORY.md" if team else "MEMORY.md"
        if cut.line_truncated:
            parts.append(f"{name} {cut.line_count}/{MAX_ENTRYPOINT_LINES} lines")
        else:
            limit = short_tokens(MAX_ENTRYPOINT_LENGTH)
            parts.append(f"{name} {short_tokens(cut.length)}/{limit} chars")
    return " ".join(parts) or None
