"""What names and dates a session, read from single transcript entries: its title (custom
title, AI title, a trusted summary, the last or the first prompt), the prompt the user typed or
the slash command they ran, the Claude Code release that wrote it, and its timestamps in
`toISOString` form.

Apart from `transcript.py` because two readers share them: the `Transcript` model and the
session list's quick read of a big file, which parses a few lines and builds no `Transcript`.
They only read entries, so `Entry` is imported for its type alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable
from typing import TYPE_CHECKING, Any

from workbench.engine.jsutil import js_iso
from workbench.engine.shown_text import shown

if TYPE_CHECKING:
    from workbench.engine.context.transcript import Entry

# Texts Claude Code writes as user messages itself: never a session's title.
HARNESS_USER_TEXTS = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
_COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>([\s\S]*?)</command-args>")


def _first_text(entry: Entry) -> str | None:
    content = entry.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in entry.blocks if b.get("type") == "text"]
        return next((t for t in texts if isinstance(t, str)), None)
    return None


def is_title_text(text: str | None) -> bool:
    """Text that can name a session: not empty, not a marker Claude Code writes itself."""
    return bool(text and text.strip() and text.strip() not in HARNESS_USER_TEXTS)


def typed_prompt(entry: Entry) -> str | None:
    """The text of a prompt the user typed, or None for anything else (injected text, a
    command wrapper, Claude Code's own interruption marker)."""
    if entry.type != "user" or entry.is_meta or entry.is_compact_summary:
        return None
    text = _first_text(entry)
    if text and not text.lstrip().startswith("<") and is_title_text(text):
        return text.strip()
    return None


def slash_command(entry: Entry) -> str | None:
    """`/name args` of a slash command the user typed (its `<command-name>` wrapper)."""
    if entry.type != "user" or entry.is_compact_summary:
        return None
    text = _first_text(entry)
    if not text or "<command-name>" not in text:
        return None
    match = _COMMAND_NAME.search(text)
    if match is None:
        return None
    name = match.group(1)
    name = name if name.startswith("/") else "/" + name
    args = _COMMAND_ARGS.search(text)
    extra = " ".join(args.group(1).split()) if args else ""
    return f"{name} {extra}".strip()


def last_version(entries: Iterable[Entry]) -> str | None:
    """The `version` of the last entry that has one (the release that wrote last)."""
    from workbench.engine.profiles import parse_version

    for entry in reversed(list(entries)):
        value = entry.raw.get("version")
        if isinstance(value, str) and parse_version(value) is not None:
            return value.strip()
    return None


def iso_timestamp(value: Any) -> str | None:
    """A transcript timestamp as ISO 8601 UTC with milliseconds (`toISOString`), or None
    when it cannot be read as a time: ISO text with any offset (UTC when none), epoch
    seconds or milliseconds (numbers or digit strings), or an RFC 2822 date."""
    from datetime import UTC, datetime

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if re.fullmatch(r"\d{9,14}(?:\.\d+)?", text):
            number = float(text)
        else:
            return _iso_from_text(text)
    else:
        return None
    if not math.isfinite(number) or number <= 0:
        return None
    ms = number if number >= 1e11 else number * 1000  # seconds before ~5138, else ms
    try:
        datetime.fromtimestamp(ms / 1000, tz=UTC)  # in the range a date can show
    except (OverflowError, OSError, ValueError):
        return None
    return js_iso(ms)


def _iso_from_text(text: str) -> str | None:
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    stamp = None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        try:
            stamp = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if stamp is None:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    try:
        return js_iso(stamp.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        return None


def pick_title(
    entries: Iterable[Entry], known_uuids: Container[str] | None, first_prompt: str | None
) -> str | None:
    """Custom title, AI title, a trusted summary, the last prompt, else the first prompt.

    A summary is trusted when its `leafUuid` is in `known_uuids` (None trusts them all).
    """
    custom = ai = summary = last_prompt = None
    for entry in entries:
        kind = entry.type
        if kind == "custom-title":
            custom = _str(entry.raw.get("customTitle")) or custom
        elif kind == "ai-title":
            ai = _str(entry.raw.get("aiTitle")) or ai
        elif kind == "summary" and (
            known_uuids is None or entry.raw.get("leafUuid") in known_uuids
        ):
            summary = _str(entry.raw.get("summary")) or summary
        elif kind == "last-prompt":
            last_prompt = _str(entry.raw.get("lastPrompt")) or last_prompt
    choices = (custom, ai, summary, last_prompt, first_prompt)
    chosen = next((c for c in choices if is_title_text(c)), None)
    return shown(" ".join(chosen.split())[:200]) if chosen else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
