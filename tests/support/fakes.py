"""Small hand-written doubles shared by the suite (no mocks of our own functions)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.fold.summarizer import FoldInput, SummaryDraft
from memory.types import Exchange
from providers.base import ChatReply, ChatRequest, ProviderError, StopReason, Usage


def last_message(request: ChatRequest) -> str:
    return request.messages[-1].content if request.messages else ""


def echo(request: ChatRequest) -> str:
    """`re: <last message>`."""
    return f"re: {last_message(request)}"


def respuesta(request: ChatRequest) -> str:
    """`Respuesta a «<last message>»`."""
    return f"Respuesta a «{last_message(request)}»"


@dataclass
class ScriptedChatModel:
    """The one scripted chat model: answers from a script (text, a whole ChatReply, or a
    ProviderError to raise), then from `replies` (by the last message), then
    `reply(request)`, else `"<default> <n>"` (distinct, so never a repeat: noise), or,
    when `strict`, fails the test. Records every request; can wait on a `gate`, sleep
    `delay` seconds, or run `on_call` first. Replies name `model` (default: `name`) and
    carry `usage`, or `usage_of(n)` for the n-th call."""

    script: list[str | ChatReply | ProviderError] = field(default_factory=list)
    default: str = "ok"
    name: str = "scripted"
    stop_reason: StopReason = "end"
    requests: list[ChatRequest] = field(default_factory=list)
    on_call: Callable[[ChatRequest], object] | None = None
    gate: asyncio.Event | None = None  # when set, every call waits for it
    usage: Usage = field(default_factory=lambda: Usage(10, 5))
    reply: Callable[[ChatRequest], str] | None = None
    replies: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    strict: bool = False
    model: str | None = None
    usage_of: Callable[[int], Usage] | None = None

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        if self.on_call is not None:
            result = self.on_call(request)
            if asyncio.iscoroutine(result):
                await result
        if self.gate is not None:
            await self.gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        item = self.script.pop(0) if self.script else self._unscripted(request)
        if isinstance(item, ProviderError):
            raise item
        if isinstance(item, ChatReply):
            return item
        usage = self.usage_of(len(self.requests)) if self.usage_of else self.usage
        return ChatReply(item, self.stop_reason, usage, self.model or self.name)

    def _unscripted(self, request: ChatRequest) -> str:
        assert not self.strict, "unexpected extra model call"
        if last_message(request) in self.replies:
            return self.replies[last_message(request)]
        if self.reply is not None:
            return self.reply(request)
        return f"{self.default} {len(self.requests)}"

    @property
    def chat_calls(self) -> list[ChatRequest]:
        """The requests for replies (not topic checks or folds)."""
        return [r for r in self.requests if r.purpose == "chat"]


@dataclass
class FakeSummarizer:
    """A summarizer whose summary lists the folded exchange ids; can fail or block."""

    name: str = "fake-summary"
    prompt_version: str = "fold-v1"
    fail: bool = False
    gate: asyncio.Event | None = None
    calls: list[tuple[str, tuple[Exchange, ...]]] = field(default_factory=list)

    async def summarize(self, request: FoldInput) -> SummaryDraft:
        previous, exchanges = request.previous, request.exchanges
        self.calls.append((previous, tuple(exchanges)))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise ProviderError("summary model down")
        lines = [
            f"Intercambio #{ex.id}: el usuario dijo «{' '.join(ex.user_text.split()[:8])}» y "
            f"el asistente respondió «{' '.join(ex.reply_text.split()[:8])}»."
            for ex in exchanges
        ]
        text = "\n".join([previous, *lines] if previous else lines)
        return SummaryDraft(text, 20, 10, self.name)


async def eventually(check: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll `check` until it holds, for at most `seconds`: the state it reads belongs to
    other tasks or threads (a server's, the store's)."""
    for _ in range(int(seconds / 0.005)):
        if check():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"condition not met within {seconds:g} s")
