"""What the two SDK adapters share: retries around one attempt, closing only a client
we made, and the translation of an SDK failure into our error types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .base import ChatReply, ChatRequest, ProviderError, ProviderTimeout, ProviderUnavailable
from .errors import ErrorFacts, classify
from .retry import RetryPolicy, Sleep, with_retries
from .streaming import TextSink, stream_with_retries


class _Closable(Protocol):
    async def close(self) -> None: ...


class RetryingChatModel:
    """A streaming `ChatModel` whose `complete` retries `_attempt` (and `stream`,
    `_stream_attempt`, only while nothing was shown) under its `RetryPolicy`."""

    _policy: RetryPolicy
    _sleep: Sleep
    _client: _Closable
    _owns_client: bool  # the SDK closes whatever client it holds; only close one we made

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await with_retries(
            lambda time_limit: self._attempt(request, time_limit), self._policy, sleep=self._sleep
        )

    async def stream(self, request: ChatRequest, on_text: TextSink) -> ChatReply:
        """`complete`, streamed: `on_text` gets the text so far as it grows."""
        return await stream_with_retries(
            lambda time_limit, sink: self._stream_attempt(request, time_limit, sink),
            on_text,
            self._policy,
            sleep=self._sleep,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    async def _attempt(self, request: ChatRequest, time_limit: float) -> ChatReply:
        raise NotImplementedError

    async def _stream_attempt(
        self, request: ChatRequest, time_limit: float, on_text: TextSink
    ) -> ChatReply:
        raise NotImplementedError


class SDKErrors(Protocol):
    """The exception types both SDKs (`anthropic`, `openai`) define at their top level."""

    APITimeoutError: type[Exception]
    APIConnectionError: type[Exception]
    APIStatusError: type[Exception]


def translate(
    provider: str, exc: BaseException, sdk: Any, facts: Callable[[Any], ErrorFacts]
) -> ProviderError:
    """An SDK failure as our error: a timeout, a failed connection, an HTTP error answer
    (decided by `classify` from the adapter's `facts` about it), or an unreadable
    response. `sdk` is the SDK module (see `SDKErrors`)."""
    errors: SDKErrors = sdk
    if isinstance(exc, errors.APITimeoutError):  # before: it is a connection error too
        return ProviderTimeout(f"{provider}: request timed out")
    if isinstance(exc, errors.APIConnectionError):
        return ProviderUnavailable(f"{provider}: connection failed")
    if isinstance(exc, errors.APIStatusError):
        return classify(facts(exc))
    # Broken JSON or a body the SDK could not read: the server is not answering sanely.
    return ProviderUnavailable(f"{provider}: unreadable response ({type(exc).__name__})")
