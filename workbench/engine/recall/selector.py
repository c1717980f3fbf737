"""Claude Code's model selector (`findRelevantMemories`, spec 02 §3.3), request and parsing.

The request is built exactly: Sonnet, `max_tokens` 256, no system-prompt prefix, the user
message `Query: …\\n\\nAvailable memories:\\n<manifest>` (plus the recently used tools), and
the structured-output schema with `selected_memories`. Parsing keeps only names that are
candidate file names; anything malformed counts as "no memories", as in Claude Code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.engine.llm.request import build_request

SELECTOR_MAX_TOKENS = 256
MAX_SELECTED = 5
SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}

SELECT_MEMORIES_SYSTEM_PROMPT = """\
You decide which saved memories Claude Code should see while it handles a user's request. \
You get the request and a list of memory files, each with its file name, the time it was \
saved and a one-line description.

Answer with the file names of the memories that will clearly be useful for this request: \
at most 5, judged from their names and descriptions alone. If you are not sure a memory \
will help, leave it out; an empty list is a perfectly good answer.

When the request comes with a list of recently used tools, skip memories that are usage \
guides or API reference for those tools, since the agent is already using them. Still pick \
memories that hold warnings, gotchas or known problems with those tools."""


def selector_user_message(query: str, manifest: str, recent_tools: Sequence[str] = ()) -> str:
    """`Query: <q>\\n\\nAvailable memories:\\n<manifest>` plus the recently used tools."""
    text = f"Query: {query}\n\nAvailable memories:\n{manifest}"
    if recent_tools:
        text += f"\n\nRecently used tools: {', '.join(recent_tools)}"
    return text


def build_selector_request(
    query: str, manifest: str, *, model: str, recent_tools: Sequence[str] = ()
) -> dict[str, Any]:
    """The exact body the selector sends to `POST /v1/messages`."""
    return build_request(
        model=model,
        max_tokens=SELECTOR_MAX_TOKENS,
        system=SELECT_MEMORIES_SYSTEM_PROMPT,
        messages=[
            {"role": "user", "content": selector_user_message(query, manifest, recent_tools)}
        ],
        output_schema=SELECTION_SCHEMA,
    )


@dataclass(frozen=True)
class ParsedSelection:
    """The model's answer, checked against the candidates."""

    accepted: tuple[str, ...]
    """Candidate file names, in the model's order, at most 5, no repeats."""
    unknown: tuple[str, ...]
    """Names the model gave that are not candidates (dropped)."""
    over_limit: tuple[str, ...]
    """Valid names beyond the fifth (dropped)."""
    problem: str | None
    """Why the answer could not be used at all, when that happened."""


def parse_selection(text: str | None, candidate_names: Sequence[str]) -> ParsedSelection:
    """Parse the first text block; keep exact candidate names only (errors mean none)."""
    if text is None:
        return ParsedSelection((), (), (), "the model answered without any text")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParsedSelection((), (), (), f"the model's answer is not valid JSON ({exc.msg})")
    raw = data.get("selected_memories") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return ParsedSelection((), (), (), "the model's answer has no selected_memories list")
    known = set(candidate_names)
    accepted: list[str] = []
    unknown: list[str] = []
    over: list[str] = []
    for item in raw:
        name = item if isinstance(item, str) else json.dumps(item)
        if name not in known:
            unknown.append(name)
        elif name in accepted or name in over:
            continue
        elif len(accepted) < MAX_SELECTED:
            accepted.append(name)
        else:
            over.append(name)
    return ParsedSelection(tuple(accepted), tuple(unknown), tuple(over), None)
