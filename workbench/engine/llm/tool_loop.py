"""A bounded tool-use conversation: ask, run the requested tools locally, answer, repeat.

Turns follow Claude Code's forked agents: each turn is one model call; tools the model asks
for are always executed and answered in the next turn; when `max_turns` calls have been made
the loop stops even if the last reply still asked for tools (their results are recorded but
never sent). A denied or unknown tool, or a handler that fails, becomes an error tool_result
the model can read; it never ends the loop or raises.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from workbench.engine.errors import WorkbenchError
from workbench.engine.llm.client import ModelClient
from workbench.engine.llm.request import Message, ModelReply, ToolCall, Usage, tool_result_block


@dataclass(frozen=True)
class ToolOutcome:
    """What a local tool handler returns to the model."""

    content: str | list[dict[str, Any]]
    is_error: bool = False


ToolHandler = Callable[[dict[str, Any]], "ToolOutcome | str | Awaitable[ToolOutcome | str]"]
"""A handler receives the tool_use `input` and returns text or a `ToolOutcome`."""
PermissionCheck = Callable[[ToolCall], "str | None"]
"""Returns a refusal message for a call that may not run, else None."""
ReplyCallback = Callable[[int, ModelReply], None]


@dataclass(frozen=True)
class ToolExchange:
    """One tool call and what it produced."""

    turn: int
    call: ToolCall
    outcome: ToolOutcome
    denied: bool = False
    """The permission check refused it, or no handler exists for the tool name."""

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "call": self.call.to_json(),
            "content": self.outcome.content,
            "is_error": self.outcome.is_error,
            "denied": self.denied,
        }


@dataclass(frozen=True)
class ToolLoopResult:
    """The whole conversation of one bounded tool-use run."""

    replies: tuple[ModelReply, ...]
    messages: tuple[Message, ...]
    """Every message sent or received, starting with the request's own."""
    exchanges: tuple[ToolExchange, ...]
    stopped: Literal["end_turn", "max_turns"]
    """`end_turn` when the model stopped asking for tools, `max_turns` when the cap hit."""
    usage: Usage

    @property
    def turns(self) -> int:
        """How many model calls were made."""
        return len(self.replies)

    @property
    def final_text(self) -> str:
        """The text of the last reply."""
        return self.replies[-1].text if self.replies else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "stopped": self.stopped,
            "final_text": self.final_text,
            "exchanges": [e.to_json() for e in self.exchanges],
            "usage": self.usage.to_json(),
        }


async def run_tool_loop(
    client: ModelClient,
    request: Mapping[str, Any],
    handlers: Mapping[str, ToolHandler],
    *,
    max_turns: int,
    can_use_tool: PermissionCheck | None = None,
    on_reply: ReplyCallback | None = None,
) -> ToolLoopResult:
    """Run `request` (with its `tools`) for at most `max_turns` model calls.

    `handlers` maps tool names to local functions. API failures raise `LLMError`; tool
    failures become error tool_results.
    """
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    messages: list[Message] = [dict(m) for m in request.get("messages", [])]
    replies: list[ModelReply] = []
    exchanges: list[ToolExchange] = []
    usage = Usage()
    stopped: Literal["end_turn", "max_turns"] = "end_turn"
    for turn in range(1, max_turns + 1):
        body = dict(request)
        body["messages"] = list(messages)
        reply = await client.create(body)
        replies.append(reply)
        usage = usage + reply.usage
        messages.append(reply.as_message())
        if on_reply is not None:
            on_reply(turn, reply)
        calls = reply.tool_calls
        if not calls:
            break
        results = []
        for call in calls:
            exchange = await _run_one(turn, call, handlers, can_use_tool)
            exchanges.append(exchange)
            results.append(
                tool_result_block(
                    call.id, exchange.outcome.content, is_error=exchange.outcome.is_error
                )
            )
        messages.append({"role": "user", "content": results})
        if turn == max_turns:
            stopped = "max_turns"
    return ToolLoopResult(
        replies=tuple(replies),
        messages=tuple(messages),
        exchanges=tuple(exchanges),
        stopped=stopped,
        usage=usage,
    )


async def _run_one(
    turn: int,
    call: ToolCall,
    handlers: Mapping[str, ToolHandler],
    can_use_tool: PermissionCheck | None,
) -> ToolExchange:
    handler = handlers.get(call.name)
    if handler is None:
        allowed = ", ".join(sorted(handlers)) or "none"
        outcome = ToolOutcome(
            f"No tool named {call.name!r} is available here (available: {allowed}).",
            is_error=True,
        )
        return ToolExchange(turn, call, outcome, denied=True)
    if can_use_tool is not None:
        refusal = can_use_tool(call)
        if refusal:
            return ToolExchange(turn, call, ToolOutcome(refusal, is_error=True), denied=True)
    try:
        produced = handler(call.input)
        if inspect.isawaitable(produced):
            produced = await produced
    except WorkbenchError as exc:
        produced = ToolOutcome(str(exc), is_error=True)
    except Exception as exc:  # noqa: BLE001 - a broken tool must not end the conversation
        produced = ToolOutcome(f"The tool failed: {exc.__class__.__name__}: {exc}", is_error=True)
    outcome = produced if isinstance(produced, ToolOutcome) else ToolOutcome(str(produced))
    return ToolExchange(turn, call, outcome)
