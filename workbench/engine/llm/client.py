"""The one place the engine talks to the Messages API, through the `anthropic` SDK.

The SDK is imported inside the call path only: `import anthropic` costs over a second, and
opening the workbench must not pay for it. Every failure leaves here as an `LLMError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.engine.llm.config import LLMConfig
from workbench.engine.llm.errors import LLMError, LLMNotConfiguredError, translate_error
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
        with self._sdk_errors():
            message = await sdk.messages.create(**dict(body))
        return reply_from_sdk(message)

    async def stream(
        self, body: Mapping[str, Any], on_text: TextCallback | None = None
    ) -> ModelReply:
        """Send `body` with `stream: true`, call `on_text` per text delta, return the whole reply."""
        sdk = self._client()
        params = {k: v for k, v in body.items() if k != "stream"}
        with self._sdk_errors():
            async with sdk.messages.stream(**params) as events:
                async for event in events:
                    if on_text is not None and getattr(event, "type", None) == "text":
                        on_text(event.text)
                message = await events.get_final_message()
        return reply_from_sdk(message)

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
        with self._sdk_errors():
            counted = await sdk.messages.count_tokens(**params)
        return int(counted.input_tokens)

    @contextmanager
    def _sdk_errors(self) -> Iterator[None]:
        """Every SDK failure inside the block leaves as the matching `LLMError`."""
        try:
            yield
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes an LLMError
            raise translate_error(exc, base_url=self.config.base_url) from None
