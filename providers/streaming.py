"""Streaming: an optional extension of `ChatModel` that shows a reply while it is written.

A model that can stream also has `stream(request, on_text)`: it calls `on_text` with the
whole text so far each time it grows, and returns the same `ChatReply` `complete` would.
`complete_streaming` picks `stream` when the model has it and a caller listens, else
falls back to `complete`. The reply deadline and retries hold as for `complete`, with one
difference: once any text was shown, a failure is not retried (a second attempt would
show a different reply over the first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, runtime_checkable

from .base import ChatModel, ChatReply, ChatRequest
from .retry import RetryPolicy, Sleep, with_retries

T = TypeVar("T")
TextSink = Callable[[str], Awaitable[None]]
StreamAttempt = Callable[[float, TextSink], Awaitable[T]]


@runtime_checkable
class StreamingChatModel(Protocol):
    """A `ChatModel` that can also stream its reply."""

    name: str

    async def complete(self, request: ChatRequest) -> ChatReply: ...

    async def stream(self, request: ChatRequest, on_text: TextSink) -> ChatReply: ...


async def complete_streaming(
    model: ChatModel, request: ChatRequest, on_text: TextSink | None
) -> ChatReply:
    """`model.stream` when it streams and someone listens, else `model.complete`."""
    if on_text is not None and isinstance(model, StreamingChatModel):
        return await model.stream(request, on_text)
    return await model.complete(request)


async def stream_with_retries(
    attempt: StreamAttempt[T],
    on_text: TextSink,
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
) -> T:
    """`with_retries` for a streamed attempt: retried only while nothing was shown."""
    shown = False

    async def sink(text: str) -> None:
        nonlocal shown
        if text:
            shown = True
            await on_text(text)

    return await with_retries(
        lambda time_limit: attempt(time_limit, sink),
        policy,
        sleep=sleep,
        may_retry=lambda: not shown,
    )
