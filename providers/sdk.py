"""What the two SDK adapters share: retries around one attempt, closing only a client
we made, and the translation of an SDK failure into our error types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from .base import ChatReply, ChatRequest, ProviderError, ProviderTimeout, ProviderUnavailable
from .errors import ErrorFacts, classify
from .retry import RetryPolicy, Sleep, with_retries

E = TypeVar("E", bound=BaseException)


class _Closable(Protocol):
    async def close(self) -> None: ...


class RetryingChatModel:
    """A `ChatModel` whose `complete` retries `_attempt` under its `RetryPolicy`."""

    _policy: RetryPolicy
    _sleep: Sleep
    _client: _Closable
    _owns_client: bool  # the SDK closes whatever client it holds; only close one we made

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await with_retries(
            lambda time_limit: self._attempt(request, time_limit), self._policy, sleep=self._sleep
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    async def _attempt(self, request: ChatRequest, time_limit: float) -> ChatReply:
        raise NotImplementedError


def translate(
    provider: str,
    exc: BaseException,
    *,
    timeout: type[BaseException],
    connection: type[BaseException],
    status: type[E],
    facts: Callable[[E], ErrorFacts],
) -> ProviderError:
    """An SDK failure as our error: a timeout, a failed connection, an HTTP error answer
    (decided by `classify` from the adapter's `facts`), or an unreadable response."""
    if isinstance(exc, timeout):
        return ProviderTimeout(f"{provider}: request timed out")
    if isinstance(exc, connection):
        return ProviderUnavailable(f"{provider}: connection failed")
    if isinstance(exc, status):
        return classify(facts(exc))
    # Broken JSON or a body the SDK could not read: the server is not answering sanely.
    return ProviderUnavailable(f"{provider}: unreadable response ({type(exc).__name__})")
