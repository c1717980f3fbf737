"""The model layer: configuration, exact request bodies, the async client and the tool loop.

Nothing here imports `anthropic` at import time; the SDK loads on the first real call.
"""

from __future__ import annotations

from workbench.engine.llm.client import ModelClient
from workbench.engine.llm.config import DEFAULT_SONNET_MODEL, LLMConfig, default_sonnet_model
from workbench.engine.llm.errors import (
    LLMAuthError,
    LLMBadResponseError,
    LLMConnectionError,
    LLMError,
    LLMNotConfiguredError,
    LLMOverloadedError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    PromptTooLongError,
    prompt_too_long_tokens,
)
from workbench.engine.llm.request import (
    Message,
    ModelReply,
    ToolCall,
    Usage,
    build_request,
    json_schema_format,
    tool_result_block,
    user_message,
)
from workbench.engine.llm.tool_loop import (
    ToolExchange,
    ToolHandler,
    ToolLoopResult,
    ToolOutcome,
    run_tool_loop,
)

__all__ = [
    "DEFAULT_SONNET_MODEL",
    "LLMAuthError",
    "LLMBadResponseError",
    "LLMConfig",
    "LLMConnectionError",
    "LLMError",
    "LLMNotConfiguredError",
    "LLMOverloadedError",
    "LLMRateLimitError",
    "LLMRequestError",
    "LLMServerError",
    "LLMTimeoutError",
    "Message",
    "ModelClient",
    "ModelReply",
    "PromptTooLongError",
    "ToolCall",
    "ToolExchange",
    "ToolHandler",
    "ToolLoopResult",
    "ToolOutcome",
    "Usage",
    "build_request",
    "default_sonnet_model",
    "json_schema_format",
    "prompt_too_long_tokens",
    "run_tool_loop",
    "tool_result_block",
    "user_message",
]
