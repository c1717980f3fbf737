"""Reading what Claude Code sent: request kinds, the MEMORY.md block, the memory prompt.

Everything here works on the structure of the requests (block kinds, headings, lengths), so
no Claude Code text has to live in the project: a summary request is recognised as a long
instruction block after the tool results, and the memory prompt as the top-level section
whose heading mentions memory.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from tests.fakes.messages_api import RecordedRequest, blocks_text

_REMINDER = "<system-reminder>"
# Each instruction file (CLAUDE.md, rules, MEMORY.md) is sent as a block naming its path; the
# content runs to the next block or the reminder's end.
_FILE_HEADER = re.compile(r"Contents of (?P<path>/[^\n]*?) \((?P<label>[^\n]*)\):\n\n")
_MEMORY_ENDS = ("\n\nContents of /", "\n# currentDate", "\n</system-reminder>")
SUMMARY_PROMPT_MIN_CHARS = 1500


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def is_summary_request(request: RecordedRequest) -> bool:
    """A compaction call: the last user turn carries a long instruction that is neither a
    tool result nor a reminder (Claude Code appends its summary prompt there)."""
    if not request.is_message or not request.messages:
        return False
    # Newer releases may end the list with a system-role note; the prompt is in the last user turn.
    users = [m for m in request.messages if m.get("role") == "user"]
    if not users:
        return False
    last = users[-1]
    for block in _blocks(last.get("content")):
        text = block.get("text") if block.get("type") == "text" else None
        if (
            isinstance(text, str)
            and len(text) >= SUMMARY_PROMPT_MIN_CHARS
            and not text.lstrip().startswith(_REMINDER)
        ):
            return True
    return False


def is_main_request(request: RecordedRequest, main_tools: list[str]) -> bool:
    """A main-thread call: the same tool list as the session's first call, not a summary."""
    return (
        request.is_message and request.tool_names == main_tools and not is_summary_request(request)
    )


def all_texts(request: RecordedRequest) -> list[str]:
    """Every text the request carries: system blocks, then message texts in order."""
    body = request.body if isinstance(request.body, dict) else {}
    texts = [blocks_text(body.get("system"))] if body.get("system") else []
    for message in request.messages:
        for block in _blocks(message.get("content")):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
    return texts


@dataclass(frozen=True)
class FileBlock:
    """One instruction file as Claude Code sent it (CLAUDE.md, a rule, MEMORY.md)."""

    path: str
    label: str
    """Claude Code's description of the source, in parentheses after the path."""
    text: str
    """Everything after the header: the loaded content, then any truncation warning."""


MemoryBlock = FileBlock


def file_blocks(request: RecordedRequest) -> list[FileBlock]:
    """Every instruction-file block in the request, in the order Claude Code sent them."""
    found: list[FileBlock] = []
    for text in all_texts(request):
        for match in _FILE_HEADER.finditer(text):
            rest = text[match.end() :]
            ends = [i for i in (rest.find(marker) for marker in _MEMORY_ENDS) if i >= 0]
            body = rest[: min(ends)] if ends else rest
            found.append(FileBlock(match.group("path"), match.group("label"), body))
    return found


def memory_blocks(request: RecordedRequest) -> list[FileBlock]:
    """The MEMORY.md blocks (auto memory and team memory)."""
    return [b for b in file_blocks(request) if b.path.endswith("/MEMORY.md")]


def split_warning(block_text: str, loaded: str) -> tuple[bool, str]:
    """Whether the block starts with `loaded`, and what follows it (the warning, if any)."""
    if not block_text.startswith(loaded):
        return False, block_text
    return True, block_text[len(loaded) :]


@dataclass(frozen=True)
class PromptShape:
    """The memory prompt's structure: never its text."""

    heading_level: int
    sections: int
    """`##` headings inside it."""
    chars: int
    sha256: str
    names_memory_dir: bool
    mentions_line_limit: bool
    """Whether the number 200 (the index's line limit) appears in it."""

    def to_json(self) -> dict[str, Any]:
        return {
            "heading_level": self.heading_level,
            "sections": self.sections,
            "chars": self.chars,
            "sha256": self.sha256,
            "names_memory_dir": self.names_memory_dir,
            "mentions_line_limit": self.mentions_line_limit,
            "band": size_band(self.chars),
        }


def size_band(chars: int) -> str:
    """A coarse size class: the two releases' prompts differ sixfold, our words by less."""
    return "short (< 4,000 chars)" if chars < 4000 else "long (>= 4,000 chars)"


_TOP_HEADING = re.compile(r"(?m)^# (?P<title>.+)$")


def memory_prompt_section(text: str) -> str | None:
    """The top-level `# ...` section whose heading names memory, up to the next `# ` heading."""
    headings = list(_TOP_HEADING.finditer(text))
    for i, match in enumerate(headings):
        if "memory" in match.group("title").lower():
            end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
            return text[match.start() : end].rstrip("\n")
    return None


def prompt_shape(section: str, memory_dir: str | None) -> PromptShape:
    return PromptShape(
        heading_level=1,
        sections=len(re.findall(r"(?m)^## ", section)),
        chars=len(section),
        sha256=hashlib.sha256(section.encode("utf-8")).hexdigest(),
        names_memory_dir=bool(memory_dir) and memory_dir.rstrip("/") in section,
        mentions_line_limit=re.search(r"\b200\b", section) is not None,
    )


def find_memory_prompt(request: RecordedRequest) -> str | None:
    """The memory prompt in a main-thread request (the system prompt, else a message)."""
    for text in all_texts(request):
        section = memory_prompt_section(text)
        if section is not None and len(section) > 200:
            return section
    return None
