"""What the two SDK adapters share: the client options (both SDKs take the same ones),
retries around one attempt, closing only a client we made, the translation of an SDK
failure into our error types, and the message list shaped the way strict chat APIs
demand it (`alternate`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Protocol, Required, TypedDict

import httpx2

from .base import (
    ChatReply,
    ChatRequest,
    Message,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from .cap import DEFAULT_REPLY_MAX_CHARS, body_limit, capped
from .errors import ErrorFacts, classify
from .retry import RetryPolicy, Sleep, with_retries
from .streaming import TextSink, stream_with_retries


class _Closable(Protocol):
    async def close(self) -> None: ...


class ClientOptions(TypedDict):
    """What both SDK clients are given explicitly, so they read nothing on their own."""

    api_key: str
    base_url: str
    http_client: httpx2.AsyncClient | None
    timeout: float
    max_retries: int


class Options(TypedDict, total=False):
    """The constructor's keywords, for an adapter that adds its own."""

    api_key: Required[str]
    base_url: str | None
    http_client: httpx2.AsyncClient | None
    policy: RetryPolicy | None
    sleep: Sleep
    reply_max_chars: int


class RetryingChatModel:
    """A streaming `ChatModel` whose `complete` retries `_attempt` (and `stream`,
    `_stream_attempt`, only while nothing was shown) under its `RetryPolicy`; a reply
    over `reply_max_chars` is cut there (see `cap`)."""

    provider: ClassVar[str]
    default_base_url: ClassVar[str]
    _policy: RetryPolicy
    _sleep: Sleep
    _client: _Closable
    _owns_client: bool  # the SDK closes whatever client it holds; only close one we made

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        policy: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        reply_max_chars: int = DEFAULT_REPLY_MAX_CHARS,
    ) -> None:
        if not api_key:
            kind = type(self).__name__
            raise ValueError(f"{kind} needs an API key ({self.provider.upper()}_API_KEY)")
        self.name = f"{self.provider}:{model}"
        self.model = model
        self._policy = policy or RetryPolicy()
        self._sleep = sleep
        self.reply_max_chars = reply_max_chars
        self._owns_client = http_client is None
        self._client = self._connect(
            ClientOptions(
                api_key=api_key,
                base_url=base_url or self.default_base_url,
                http_client=http_client,
                timeout=self._policy.attempt_timeout,
                max_retries=0,  # our `retry` module owns retries
            )
        )

    def _connect(self, options: ClientOptions) -> _Closable:
        """The SDK client, built from nothing but `options` (and the adapter's own)."""
        raise NotImplementedError

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

    @property
    def _body_limit(self) -> int:
        return body_limit(self.reply_max_chars)

    def _within_cap(self, reply: ChatReply) -> ChatReply:
        """`reply`, or its first `reply_max_chars` marked capped when it is longer."""
        if len(reply.text) <= self.reply_max_chars:
            return reply
        return capped(reply.text, self.reply_max_chars, reply.model, reply.usage)

    def _over_cap(self) -> ChatReply:
        """A body past the byte limit, dropped unread: nothing of it is kept."""
        return capped("", self.reply_max_chars, self.model)

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


def alternate(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Drop blank messages and join neighbours of the same role with a blank line.

    The Anthropic API rejects empty text and two turns of one role in a row; so do many
    chat templates behind OpenAI-compatible servers (Mistral, Llama on vLLM). Joining
    keeps every word, which dropping or reordering would not.
    """
    merged: list[Message] = []
    for message in messages:
        if not message.content.strip():
            continue
        if merged and merged[-1].role == message.role:
            joined = f"{merged[-1].content}\n\n{message.content}"
            merged[-1] = Message(message.role, joined)
        else:
            merged.append(message)
    return tuple(merged)
