"""The one place the engine talks to the Messages API, through the `anthropic` SDK.

The SDK is imported inside the call path only: `import anthropic` costs over a second, and
opening the workbench must not pay for it. Every failure leaves here as an `LLMError`.

Each call has an overall deadline of the configured timeout (`API_TIMEOUT_MS`), retries
included: the SDK's own timeout applies to each read, so a server trickling a byte every few
seconds would otherwise keep a call alive for as long as it liked. A 200 that is not what the
call asked for (an HTML page from a proxy, an event stream to a plain call, JSON to a
streaming one) is a `LLMBadResponseError` naming what came back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from workbench.engine.llm.config import LLMConfig
from workbench.engine.llm.errors import (
    LLMBadResponseError,
    LLMError,
    LLMNotConfiguredError,
    LLMTimeoutError,
    timeout_message,
    translate_error,
)
from workbench.engine.llm.request import Message, ModelReply, build_request, reply_from_sdk

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

TextCallback = Callable[[str], None]


class ModelClient:
    """An async Messages API client configured from the engine's environment.

    Use it as `async with ModelClient(config) as client:` so the HTTP connection pool is
    closed on the same event loop that opened it.
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._sdk: AsyncAnthropic | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ModelClient:
        """A client for the key, endpoint and model that `env` names."""
        return cls(LLMConfig.from_env(env))

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the SDK's connection pool (safe to call twice)."""
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            await sdk.close()

    # --- requests ----------------------------------------------------------------------

    def build_request(
        self, *, messages: Sequence[Message], max_tokens: int, model: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        """`build_request` with this client's default model filled in."""
        return build_request(
            model=model or self.config.model, messages=messages, max_tokens=max_tokens, **kw
        )

    def _client(self) -> AsyncAnthropic:
        if not self.config.api_key:
            raise LLMNotConfiguredError(
                "ANTHROPIC_API_KEY is not set, so the model cannot be asked "
                "(use the offline path or a dry run instead)"
            )
        if self._sdk is None:
            import anthropic  # deferred: importing the SDK costs over a second

            self._sdk = anthropic.AsyncAnthropic(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.config.timeout_s,
                max_retries=self.config.max_retries,
            )
        return self._sdk

    async def create(self, body: Mapping[str, Any]) -> ModelReply:
        """Send `body` as it is and return the reply (streamed when `body['stream']`)."""
        if body.get("stream"):
            return await self.stream(body)
        sdk = self._client()
        async with self._deadline():
            with self._sdk_errors():
                raw = await sdk.messages.with_raw_response.create(**dict(body))
                _expect_content_type(raw.headers, "json", self.config.base_url)
                message = await raw.parse()
                return reply_from_sdk(message, request_id=raw.headers.get("request-id"))

    async def stream(
        self, body: Mapping[str, Any], on_text: TextCallback | None = None
    ) -> ModelReply:
        """Send `body` with `stream: true`, call `on_text` per text delta, return the whole reply."""
        sdk = self._client()
        params = {k: v for k, v in body.items() if k != "stream"}
        async with self._deadline():
            with self._sdk_errors():
                async with sdk.messages.stream(**params) as events:
                    headers = events.response.headers
                    _expect_content_type(headers, "text/event-stream", self.config.base_url)
                    stream = aiter(events)
                    while True:
                        try:
                            event = await anext(stream)
                        except StopAsyncIteration:
                            break
                        except _UNREADABLE_STREAM:
                            raise _unreadable_stream() from None
                        if on_text is not None and event.type == "text":
                            on_text(event.text)
                    try:
                        message = await events.get_final_message()
                    except _UNREADABLE_STREAM:  # e.g. no message ever started
                        raise _unreadable_stream() from None
                return reply_from_sdk(message, request_id=headers.get("request-id"))

    async def count_tokens(
        self,
        *,
        messages: Sequence[Message],
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        model: str | None = None,
    ) -> int:
        """Input tokens of a prompt, measured by the API's count-tokens endpoint."""
        sdk = self._client()
        params: dict[str, Any] = {"model": model or self.config.model, "messages": list(messages)}
        if system:
            params["system"] = system
        if tools:
            params["tools"] = list(tools)
        async with self._deadline():
            with self._sdk_errors():
                raw = await sdk.messages.with_raw_response.count_tokens(**params)
                _expect_content_type(raw.headers, "json", self.config.base_url)
                counted = await raw.parse()
                tokens = getattr(counted, "input_tokens", None)
        if not isinstance(tokens, int):
            raise LLMBadResponseError("the Anthropic API's token count has no input_tokens")
        return tokens

    @asynccontextmanager
    async def _deadline(self) -> AsyncIterator[None]:
        """The whole call, retries included, ends within the configured timeout."""
        try:
            async with asyncio.timeout(self.config.timeout_s):
                yield
        except TimeoutError:
            raise LLMTimeoutError(timeout_message(self.config.base_url)) from None

    @contextmanager
    def _sdk_errors(self) -> Iterator[None]:
        """Every SDK failure inside the block leaves as the matching `LLMError`."""
        try:
            yield
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes an LLMError
            raise translate_error(exc, base_url=self.config.base_url) from None


# What the SDK's stream accumulator raises when events do not add up to a message.
_UNREADABLE_STREAM = (AssertionError, AttributeError, KeyError, TypeError, ValueError)


def _unreadable_stream() -> LLMBadResponseError:
    return LLMBadResponseError(
        "the Anthropic API sent an event stream that does not add up to a message"
    )


def _expect_content_type(headers: Mapping[str, str], wanted: str, base_url: str) -> None:
    """Refuse a 200 whose body is not what the call asked for, naming what came instead."""
    received = (headers.get("content-type") or "").split(";")[0].strip().lower()
    if wanted in received:
        return
    if "event-stream" in received:
        what = "an event stream to a request that did not ask for one"
    elif "json" in received:
        what = "plain JSON to a request that asked for an event stream"
    else:
        what = f"{received or 'a body without a content type'} instead of a message"
    raise LLMBadResponseError(
        f"the Anthropic API at {base_url} answered with {what}; check ANTHROPIC_BASE_URL "
        "(a proxy or sign-in page may be answering)"
    )
