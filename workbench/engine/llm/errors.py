"""Messages API failures turned into errors a user can act on.

Every SDK exception is translated into one `LLMError` subclass with a one-line message in our
own words, the HTTP status and request id when known, and a `kind` the UI and JSON output can
switch on. The SDK's own exception text is never shown raw: it can be long and it sometimes
echoes request content.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.engine.errors import UnreachableError, UserInputError, WorkbenchError

_PROMPT_TOO_LONG = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.I)


class LLMError(WorkbenchError):
    """A model call failed; `kind` says how (exit code 2, one line on stderr)."""

    kind = "api_error"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        request_id: str | None = None,
        api_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id
        self.api_message = api_message
        """The API's own error message, kept for logs and tests; never printed by default."""

    def to_json(self) -> dict[str, Any]:
        """`{kind, http_status, message, request_id}` for JSON output."""
        return {
            "kind": self.kind,
            "http_status": self.status,
            "message": str(self),
            "request_id": self.request_id,
        }


class LLMNotConfiguredError(LLMError, UserInputError):
    """No API key: the model path cannot run."""

    kind = "no_api_key"


class LLMAuthError(LLMError, UserInputError):
    """The key was refused (401) or lacks permission (403)."""

    kind = "auth"


class LLMRateLimitError(LLMError):
    """429: too many requests or tokens for the key's limits."""

    kind = "rate_limit"


class LLMOverloadedError(LLMError):
    """529 or an `overloaded_error`: the API is busy right now."""

    kind = "overloaded"


class LLMServerError(LLMError):
    """A 5xx from the API."""

    kind = "server_error"


class LLMTimeoutError(LLMError, UnreachableError):
    """No answer within the configured timeout."""

    kind = "timeout"


class LLMConnectionError(LLMError, UnreachableError):
    """The API endpoint could not be reached."""

    kind = "connection"


class LLMRequestError(LLMError, UserInputError):
    """The API rejected the request itself (400/404/413/422)."""

    kind = "invalid_request"


class PromptTooLongError(LLMRequestError):
    """The prompt exceeds the model's context window; `gap` tokens must go."""

    kind = "prompt_too_long"

    def __init__(
        self, message: str, *, actual_tokens: int | None, limit_tokens: int | None, **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.actual_tokens = actual_tokens
        self.limit_tokens = limit_tokens

    @property
    def gap(self) -> int | None:
        """How many tokens over the limit the prompt is, when the API said."""
        if self.actual_tokens is None or self.limit_tokens is None:
            return None
        return self.actual_tokens - self.limit_tokens

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data.update(actual_tokens=self.actual_tokens, limit_tokens=self.limit_tokens, gap=self.gap)
        return data


class LLMBadResponseError(LLMError):
    """The API answered, but not with something we can use."""

    kind = "bad_response"


def prompt_too_long_tokens(message: str) -> tuple[int, int] | None:
    """`(actual, limit)` from "prompt is too long: N tokens > M maximum", else None."""
    match = _PROMPT_TOO_LONG.search(message or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def _api_error_parts(exc: Any) -> tuple[str | None, str]:
    """The Anthropic error body's `type` and `message`, tolerating odd bodies."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            err_type, msg = inner.get("type"), inner.get("message")
            return (
                err_type if isinstance(err_type, str) else None,
                msg if isinstance(msg, str) else "",
            )
    return None, str(getattr(exc, "message", "") or "")


def timeout_message(base_url: str = "") -> str:
    """The one line for a call that ran out of time."""
    where = f" at {base_url}" if base_url else ""
    return (
        f"the Anthropic API did not answer in time{where}; try again, "
        "or raise API_TIMEOUT_MS for long requests"
    )


def translate_error(exc: BaseException, *, base_url: str = "") -> LLMError:
    """Map an `anthropic` exception (or an unexpected one) to the matching `LLMError`."""
    import anthropic

    where = f" at {base_url}" if base_url else ""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMTimeoutError(timeout_message(base_url))
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMConnectionError(
            f"could not reach the Anthropic API{where}; check the network and ANTHROPIC_BASE_URL"
        )
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        request_id = getattr(exc, "request_id", None)
        err_type, api_message = _api_error_parts(exc)
        kw: dict[str, Any] = {
            "status": status,
            "request_id": request_id,
            "api_message": api_message,
        }
        if err_type == "overloaded_error" or status == 529:
            return LLMOverloadedError(
                "the Anthropic API is overloaded right now; wait a moment and try again", **kw
            )
        if status == 401 or err_type == "authentication_error":
            return LLMAuthError(
                "the Anthropic API refused the key (401); check ANTHROPIC_API_KEY", **kw
            )
        if status == 403 or err_type == "permission_error":
            return LLMAuthError(
                "this API key may not use that model or feature (403 permission denied)", **kw
            )
        if status == 429 or err_type == "rate_limit_error":
            return LLMRateLimitError(
                "rate limited by the Anthropic API (429); wait before trying again", **kw
            )
        tokens = prompt_too_long_tokens(api_message)
        if tokens is not None or "prompt is too long" in api_message.lower():
            actual, limit = tokens if tokens else (None, None)
            detail = f": {actual:,} tokens against a limit of {limit:,}" if tokens else ""
            return PromptTooLongError(
                f"the prompt is too long for the model{detail}",
                actual_tokens=actual,
                limit_tokens=limit,
                **kw,
            )
        if status == 413 or err_type == "request_too_large":
            return LLMRequestError("the request is too large for the API (413)", **kw)
        if status == 404 or err_type == "not_found_error":
            return LLMRequestError(
                "the API does not know that model or endpoint (404); check "
                "ANTHROPIC_DEFAULT_SONNET_MODEL and ANTHROPIC_BASE_URL",
                **kw,
            )
        if status >= 500:
            return LLMServerError(f"the Anthropic API failed with HTTP {status}", **kw)
        short = _one_line(api_message)
        return LLMRequestError(
            f"the Anthropic API rejected the request (HTTP {status}"
            + (f": {short})" if short else ")"),
            **kw,
        )
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMBadResponseError("the Anthropic API sent a response the SDK could not read")
    if isinstance(exc, anthropic.APIError):
        return LLMBadResponseError(f"the model call failed: {_one_line(str(exc))}")
    if isinstance(exc, ValueError):  # includes JSONDecodeError from a garbled body
        return LLMBadResponseError("the Anthropic API sent a response that is not valid JSON")
    return LLMBadResponseError(f"the model call failed: {exc.__class__.__name__}")


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
