"""Session memory, read side (spec 02 §5): the notes file, its template, its limits, and when
Claude Code would update it.

The update itself (prompt, forked agent) lives with the agents; it builds on the pieces here:
`DEFAULT_TEMPLATE`, the custom template and prompt loaders, `substitute_variables`,
`analyze_section_sizes`, `is_session_memory_empty` and the 2,000 / 12,000 limits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.engine.context.meter import ContextMeter
from workbench.engine.context.tokens import (
    as_dict,
    content_blocks,
    inner_message,
    rough_token_count,
)
from workbench.engine.context.views import (  # the limits the panes show are public
    MAX_SECTION_LENGTH,
    MAX_TOTAL_SESSION_MEMORY_TOKENS,
    MINIMUM_MESSAGE_TOKENS_TO_INIT,
    MINIMUM_TOKENS_BETWEEN_UPDATE,
    TOOL_CALLS_BETWEEN_UPDATES,
)
from workbench.engine.userfiles import NOTES_LIMIT, read_bytes, read_text

# The file format Claude Code writes on first use; it must match byte for byte so that
# `is_session_memory_empty` recognises an untouched file.
DEFAULT_TEMPLATE = """
# Session Title
_A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler_

# Current State
_What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps._

# Task specification
_What did the user ask to build? Any design decisions or other explanatory context_

# Files and Functions
_What are the important files? In short, what do they contain and why are they relevant?_

# Workflow
_What bash commands are usually run and in what order? How to interpret their output if not obvious?_

# Errors & Corrections
_Errors encountered and how they were fixed. What did the user correct? What approaches failed and should not be tried again?_

# Codebase and System Documentation
_What are the important system components? How do they work/fit together?_

# Learnings
_What has worked well? What has not? What to avoid? Do not duplicate items from other sections_

# Key results
_If the user asked a specific output such as an answer to a question, a table, or other document, repeat the exact result here_

# Worklog
_Step by step, what was attempted, done? Very terse summary for each step_
"""  # noqa: E501

SECTION_HEADERS = tuple(line for line in DEFAULT_TEMPLATE.split("\n") if line.startswith("# "))

# JavaScript's \w is ASCII-only; so is this pattern.
_VARIABLE = re.compile(r"\{\{(\w+)\}\}", re.ASCII)


# --- files ----------------------------------------------------------------------------------


def config_dir(config_home: str) -> Path:
    """`<configHome>/session-memory/config`, where custom template and prompt live."""
    return Path(config_home) / "session-memory" / "config"


@dataclass(frozen=True)
class LoadedText:
    """A template or prompt and where it came from."""

    text: str | None
    """The custom text, or None when the default applies."""
    source: str
    """`custom` or `default`."""
    path: str
    error: str | None = None
    """Why a custom file that exists was not used."""


def _load_custom(path: Path) -> LoadedText:
    try:
        text = read_bytes(path, NOTES_LIMIT, "a session-memory template").decode("utf-8")
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text gave it
    except FileNotFoundError:
        return LoadedText(None, "default", str(path))
    except (OSError, UnicodeDecodeError) as exc:
        # Claude Code falls back to its default on any error, so do we, but say why.
        return LoadedText(None, "default", str(path), f"{exc.__class__.__name__}: unreadable")
    return LoadedText(text, "custom", str(path))


def load_custom_template(config_home: str) -> LoadedText:
    """`<configHome>/session-memory/config/template.md`, or the default on any error."""
    return _load_custom(config_dir(config_home) / "template.md")


def load_custom_prompt(config_home: str) -> LoadedText:
    """`<configHome>/session-memory/config/prompt.md`, or the default on any error."""
    return _load_custom(config_dir(config_home) / "prompt.md")


def effective_template(config_home: str) -> tuple[str, LoadedText]:
    """The template text in force and how it was chosen."""
    loaded = load_custom_template(config_home)
    return (loaded.text if loaded.text is not None else DEFAULT_TEMPLATE), loaded


def substitute_variables(text: str, values: Mapping[str, str]) -> str:
    """Replace `{{name}}` once, left to right; unknown names stay literal and inserted values
    are never re-scanned or treated as backreferences."""
    return _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), text)


# --- sizes ----------------------------------------------------------------------------------


def analyze_section_sizes(content: str) -> dict[str, int]:
    """`analyzeSectionSizes`: header line → rough tokens of its trimmed body.

    Sections whose header is followed by no line at all are left out, and a repeated header
    keeps its first position with the last value, as a JavaScript object would.
    """
    sizes: dict[str, int] = {}
    header = ""
    body: list[str] = []
    for line in content.split("\n"):
        if line.startswith("# "):
            if header and body:
                sizes[header] = rough_token_count("\n".join(body).strip())
            header = line
            body = []
        else:
            body.append(line)
    if header and body:
        sizes[header] = rough_token_count("\n".join(body).strip())
    return sizes


def oversized_sections(content: str) -> list[tuple[str, int]]:
    """Sections over 2,000 tokens, largest first, as the update prompt lists them."""
    sizes = analyze_section_sizes(content)
    over = [(h, n) for h, n in sizes.items() if n > MAX_SECTION_LENGTH]
    return sorted(over, key=lambda item: item[1], reverse=True)


def total_tokens(content: str) -> int:
    """Rough tokens of the whole notes file (compared against 12,000)."""
    return rough_token_count(content)


def is_session_memory_empty(content: str, template: str = DEFAULT_TEMPLATE) -> bool:
    """True when the notes are still exactly the template (whitespace at the ends ignored)."""
    return content.strip() == template.strip()


@dataclass(frozen=True)
class SectionSize:
    """One `# ` section of the notes and its size against the 2,000-token limit."""

    header: str
    line: int
    """1-based line of the header."""
    tokens: int
    over_limit: bool
    is_template_only: bool
    """The body is just the template's italic description (nothing written yet)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "header": self.header,
            "line": self.line,
            "tokens": self.tokens,
            "over_limit": self.over_limit,
            "is_template_only": self.is_template_only,
        }


def section_sizes(content: str) -> list[SectionSize]:
    """Every section in file order (empty ones included), for the UI and the CLI."""
    out: list[SectionSize] = []
    header: str | None = None
    header_line = 0
    body: list[str] = []

    def flush() -> None:
        if header is None:
            return
        text = "\n".join(body).strip()
        tokens = rough_token_count(text)
        only_description = bool(re.fullmatch(r"_[^\n]*_", text)) or not text
        out.append(
            SectionSize(header, header_line, tokens, tokens > MAX_SECTION_LENGTH, only_description)
        )

    for number, line in enumerate(content.split("\n"), 1):
        if line.startswith("# "):
            flush()
            header, header_line, body = line, number, []
        else:
            body.append(line)
    flush()
    return out


# --- the update trigger ---------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerConfig:
    """`tengu_sm_config`: only positive values override these defaults."""

    minimum_message_tokens_to_init: int = MINIMUM_MESSAGE_TOKENS_TO_INIT
    minimum_tokens_between_update: int = MINIMUM_TOKENS_BETWEEN_UPDATE
    tool_calls_between_updates: int = TOOL_CALLS_BETWEEN_UPDATES


@dataclass(frozen=True)
class TriggerPoint:
    """A response after which Claude Code would update the session notes."""

    uuid: str | None
    index: int
    line: int
    timestamp: str | None
    tokens: int
    tokens_since_last: int
    tool_calls_since_last: int
    last_turn_has_tools: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "index": self.index,
            "line": self.line,
            "timestamp": self.timestamp,
            "tokens": self.tokens,
            "tokens_since_last": self.tokens_since_last,
            "tool_calls_since_last": self.tool_calls_since_last,
            "last_turn_has_tools": self.last_turn_has_tools,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class TriggerReport:
    """Every point an update would fire, and the state left at the end."""

    points: tuple[TriggerPoint, ...]
    initialized: bool
    last_summarized_uuid: str | None
    """Where `lastSummarizedMessageId` would stand (only set after tool-free turns)."""
    tokens_at_last_update: int
    config: TriggerConfig = field(default_factory=TriggerConfig)

    def to_json(self) -> dict[str, Any]:
        return {
            "trigger_points": [p.uuid for p in self.points],
            "points": [p.to_json() for p in self.points],
            "initialized": self.initialized,
            "last_summarized_uuid": self.last_summarized_uuid,
            "tokens_at_last_update": self.tokens_at_last_update,
        }


def _tool_use_count(raw: Mapping[str, Any]) -> int:
    return len(content_blocks(raw, "tool_use"))


def evaluate_trigger(messages: Sequence[Any], config: TriggerConfig | None = None) -> TriggerReport:
    """Run `shouldExtractMemory` after every main-thread response of a transcript.

    `messages` are the main-chain messages in order; a compact boundary restarts the token
    count (Claude Code measures only what follows it) but not the extraction state.
    """
    scan = TriggerScan(config)
    for message in messages:
        scan.add(message)
    return scan.finish()


class TriggerScan:
    """`evaluate_trigger` one message at a time, so a streamed read need not keep them.

    Whether a response has ended is known only when the next assistant record arrives (a
    streamed response is split over several records), so the last one waits, with the
    token count it saw, until then or until `finish`."""

    __slots__ = (
        "config",
        "points",
        "initialized",
        "tokens_at_last",
        "tool_calls_since",
        "last_summarized",
        "meter",
        "index",
        "pending",
    )

    def __init__(self, config: TriggerConfig | None = None) -> None:
        self.config = config or TriggerConfig()
        self.points: list[TriggerPoint] = []
        self.initialized = False
        self.tokens_at_last = 0
        self.tool_calls_since = 0
        self.last_summarized: str | None = None
        self.meter = ContextMeter()
        self.index = 0
        # (raw, index, line, token count after it) of a response whose end is not yet known.
        self.pending: tuple[Mapping[str, Any], int, int, int] | None = None

    def add(self, message: Any) -> None:
        raw = as_dict(message)
        index = self.index
        self.index += 1
        self.meter.add(raw)
        if raw.get("type") != "assistant":
            return
        if self.pending is not None:
            pending = self.pending
            self.pending = None
            if inner_message(pending[0]).get("id") != inner_message(raw).get("id"):
                self._judge(*pending)
        if raw.get("isSidechain") is True:
            return
        self.tool_calls_since += _tool_use_count(raw)
        entry = (raw, index, getattr(message, "line", 0), self.meter.count)
        if inner_message(raw).get("id") is None:
            self._judge(*entry)  # no id: nothing later can continue it
        else:
            self.pending = entry

    def finish(self) -> TriggerReport:
        if self.pending is not None:
            self._judge(*self.pending)
            self.pending = None
        return TriggerReport(
            tuple(self.points),
            self.initialized,
            self.last_summarized,
            self.tokens_at_last,
            self.config,
        )

    def _judge(self, raw: Mapping[str, Any], index: int, line: int, current: int) -> None:
        if inner_message(raw).get("model") == "<synthetic>":
            return
        config, tokens_at_last = self.config, self.tokens_at_last
        if not self.initialized:
            if current < config.minimum_message_tokens_to_init:
                return
            self.initialized = True
        token_ok = current - tokens_at_last >= config.minimum_tokens_between_update
        tool_ok = self.tool_calls_since >= config.tool_calls_between_updates
        last_has_tools = _tool_use_count(raw) > 0
        if not (token_ok and (tool_ok or not last_has_tools)):
            return
        reason = (
            f"{current - tokens_at_last:,} new tokens and {self.tool_calls_since} tool calls"
            if tool_ok
            else f"{current - tokens_at_last:,} new tokens and the turn ended without tools"
        )
        uuid, stamp = raw.get("uuid"), raw.get("timestamp")
        self.points.append(
            TriggerPoint(
                uuid=uuid if isinstance(uuid, str) else None,
                index=index,
                line=line,
                timestamp=stamp if isinstance(stamp, str) else None,
                tokens=current,
                tokens_since_last=current - tokens_at_last,
                tool_calls_since_last=self.tool_calls_since,
                last_turn_has_tools=last_has_tools,
                reason=reason,
            )
        )
        self.tokens_at_last = current
        self.tool_calls_since = 0
        if not last_has_tools:
            self.last_summarized = uuid if isinstance(uuid, str) else None


# --- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionMemoryReport:
    """The notes file of one session against Claude Code's limits."""

    path: str
    exists: bool
    is_empty: bool
    template_source: str
    template_path: str
    template_error: str | None
    sections: tuple[SectionSize, ...]
    total_tokens: int
    over_total: bool
    content: str | None = None
    trigger: TriggerReport | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "exists": self.exists,
            "is_empty": self.is_empty,
            "template_source": self.template_source,
            "template_path": self.template_path,
            "template_error": self.template_error,
            "sections": [s.to_json() for s in self.sections],
            "total_tokens": self.total_tokens,
            "max_total_tokens": MAX_TOTAL_SESSION_MEMORY_TOKENS,
            "max_section_tokens": MAX_SECTION_LENGTH,
            "over_total": self.over_total,
        }
        if self.trigger is not None:
            data.update(self.trigger.to_json())
        return data


def read_session_memory(path: str, config_home: str) -> SessionMemoryReport:
    """Read a `summary.md` and measure it; a missing file is reported, not raised."""
    template, loaded = effective_template(config_home)
    target = Path(path)
    try:
        content: str | None = (
            None
            if target.is_dir()
            else read_text(target, NOTES_LIMIT, "a session-memory file", universal_newlines=True)
        )
    except (FileNotFoundError, NotADirectoryError):
        content = None
    if content is None:
        return SessionMemoryReport(
            path=str(target),
            exists=False,
            is_empty=True,
            template_source=loaded.source,
            template_path=loaded.path,
            template_error=loaded.error,
            sections=(),
            total_tokens=0,
            over_total=False,
        )
    total = total_tokens(content)
    return SessionMemoryReport(
        path=str(target),
        exists=True,
        is_empty=is_session_memory_empty(content, template),
        template_source=loaded.source,
        template_path=loaded.path,
        template_error=loaded.error,
        sections=tuple(section_sizes(content)),
        total_tokens=total,
        over_total=total > MAX_TOTAL_SESSION_MEMORY_TOKENS,
        content=content,
    )
