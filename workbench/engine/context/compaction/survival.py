"""The survival check: the concrete facts in the span a compaction will summarise (file
paths, shell commands, numbers, identifiers) and, given a summary, which of them it lost.

Summaries lose exact details first; these four kinds are what a user most often has to
re-discover after a compaction, so the preview lists them for review.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.engine.context.tokens import as_dict, content_blocks, message_content
from workbench.engine.shown_text import shown

MAX_ITEMS = 100
_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|ex|exs|heex|rs|go|rb|java|kt|swift|c|h|cc|"
    "cpp|hpp|cs|php|toml|yaml|yml|ini|cfg|conf|sh|bash|zsh|sql|css|scss|html|txt|lock|env|xml|"
    "csv|proto|tf|vue|svelte|dart|lua|r|jl|scala|gradle|dockerfile|mk"
)
_PATH = re.compile(
    r"(?<![\w/:.@-])"
    r"(?:"
    r"(?:~|\.{1,2})?/(?:[\w.@+-]+/)+[\w.@+-]+"  # absolute, ~/ or ./ paths with a folder
    r"|(?:[\w.@+-]+/)+[\w@+-]+\.(?:" + _EXTENSIONS + r")"  # relative paths with an extension
    r"|[\w-]+\.(?:" + _EXTENSIONS + r")"  # bare file names
    r")(?![\w/])",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.,/-])"
    r"(?:v?\d+\.\d+\.\d+"  # versions
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 170,251
    r"|\d+\.\d+"  # decimals
    r"|\d{2,})"  # integers of two digits or more
    r"(?:%|ms|s|MB|KB|GB|k)?"
    r"(?![\w.]\w)"
)
_CODE_SPAN = re.compile(r"`([^`\n]{2,60})`")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(\)?|\b[A-Za-z_]\w*\(\)")
_PATH_KEYS = ("file_path", "path", "notebook_path")


@dataclass(frozen=True)
class SurvivalItem:
    """One fact from the summarised span."""

    value: str
    count: int
    first_uuid: str | None
    kept: bool | None
    """Whether the summary still names it (None when no summary was given)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "count": self.count,
            "first_uuid": self.first_uuid,
            "kept": self.kept,
        }


@dataclass(frozen=True)
class SurvivalReport:
    """Paths, commands, numbers and identifiers of the span, and what a summary lost."""

    paths: tuple[SurvivalItem, ...]
    commands: tuple[SurvivalItem, ...]
    numbers: tuple[SurvivalItem, ...]
    identifiers: tuple[SurvivalItem, ...]
    summary_given: bool
    summary_source: str | None = None
    span_messages: int = 0

    def lost(self) -> dict[str, list[str]]:
        """Per kind, the values the summary no longer mentions."""
        return {
            kind: [i.value for i in getattr(self, kind) if i.kept is False]
            for kind in ("paths", "commands", "numbers", "identifiers")
        }

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "paths": [i.to_json() for i in self.paths],
            "commands": [i.to_json() for i in self.commands],
            "numbers": [i.to_json() for i in self.numbers],
            "identifiers": [i.to_json() for i in self.identifiers],
            "summary_given": self.summary_given,
            "summary_source": self.summary_source,
            "span_messages": self.span_messages,
        }
        if self.summary_given:
            data["lost"] = self.lost()
        return data


class _Tally:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first: dict[str, str | None] = {}

    def add(self, value: str, uuid: str | None) -> None:
        value = value.strip()
        if not value:
            return
        if value not in self.counts:
            self.counts[value] = 0
            self.first[value] = uuid
        self.counts[value] += 1

    def items(self, keep: Any) -> tuple[SurvivalItem, ...]:
        order = {v: i for i, v in enumerate(self.counts)}
        ranked = sorted(self.counts, key=lambda v: (-self.counts[v], order[v]))[:MAX_ITEMS]
        # Matched against the summary as written, then shown with any credential replaced.
        return tuple(
            SurvivalItem(shown(v), self.counts[v], self.first[v], keep(v) if keep else None)
            for v in ranked
        )


def _texts(raw: Mapping[str, Any]) -> Iterable[str]:
    """Conversation text of a message: prompts and replies, not tool output."""
    content = message_content(raw)
    if isinstance(content, str):
        if raw.get("isCompactSummary") is not True:
            yield content
        return
    for block in content_blocks(raw, "text"):
        text = block.get("text")
        if isinstance(text, str):
            yield text


def _tool_uses(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return content_blocks(raw, "tool_use") if raw.get("type") == "assistant" else []


def _command_text(command: str) -> str:
    first = command.strip().split("\n", 1)[0].strip()
    return first if len(first) <= 200 else first[:199] + "…"


def summary_keeps(summary: str) -> Callable[[str], bool]:
    """Whether `summary` still names a fact: verbatim, as the same number without thousands
    separators, or (for a path) by its last two components."""
    digits = summary.replace(",", "")

    def keep(value: str) -> bool:
        if value in summary:
            return True
        if value.replace(",", "") in digits and any(c.isdigit() for c in value):
            return True
        if "/" in value:
            tail = "/".join(value.rstrip("/").split("/")[-2:])
            return tail in summary
        return False

    return keep


def check_survival(
    messages: Sequence[Any], summary: str | None = None, *, summary_source: str | None = None
) -> SurvivalReport:
    """List the span's facts; with a summary, mark each as kept or lost."""
    paths, commands, numbers, identifiers = _Tally(), _Tally(), _Tally(), _Tally()
    for message in messages:
        raw = as_dict(message)
        if raw.get("type") not in ("user", "assistant"):
            continue
        uuid = raw.get("uuid") if isinstance(raw.get("uuid"), str) else None
        for block in _tool_uses(raw):
            tool_input = block.get("input")
            if not isinstance(tool_input, Mapping):
                continue
            for key in _PATH_KEYS:
                if isinstance(tool_input.get(key), str):
                    paths.add(tool_input[key], uuid)
            if block.get("name") in ("Bash", "PowerShell") and isinstance(
                tool_input.get("command"), str
            ):
                commands.add(_command_text(tool_input["command"]), uuid)
        for text in _texts(raw):
            found_paths = {m.group(0) for m in _PATH.finditer(text)}
            for value in found_paths:
                paths.add(value, uuid)
            masked = _PATH.sub(" ", text)
            for match in _NUMBER.finditer(masked):
                numbers.add(match.group(0), uuid)
            for pattern in (_CODE_SPAN, _CAMEL, _SNAKE, _DOTTED):
                for match in pattern.finditer(masked):
                    value = match.group(1) if pattern is _CODE_SPAN else match.group(0)
                    if pattern is _CODE_SPAN and (" " in value.strip() or value in found_paths):
                        continue
                    identifiers.add(value, uuid)
    keep = summary_keeps(summary) if summary is not None else None
    return SurvivalReport(
        paths=paths.items(keep),
        commands=commands.items(keep),
        numbers=numbers.items(keep),
        identifiers=identifiers.items(keep),
        summary_given=summary is not None,
        summary_source=summary_source,
        span_messages=len(messages),
    )
