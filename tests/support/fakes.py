"""Small hand-written doubles shared by the suite (no mocks of our own functions)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory.fold.facts import Fact
from memory.fold.summarizer import SummaryDraft
from memory.types import Exchange
from providers.base import ChatReply, ChatRequest, ProviderError, StopReason, Usage


@dataclass
class ScriptedChatModel:
    """Answers from a script (text, or a ProviderError to raise); records every request.

    Without a script it answers `"<default> <n>"`: distinct, so never a repeat (noise)."""

    script: list[str | ProviderError] = field(default_factory=list)
    default: str = "ok"
    name: str = "scripted"
    stop_reason: StopReason = "end"
    requests: list[ChatRequest] = field(default_factory=list)
    on_call: Callable[[ChatRequest], object] | None = None
    gate: asyncio.Event | None = None  # when set, every call waits for it
    usage: Usage = field(default_factory=lambda: Usage(10, 5))

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        if self.on_call is not None:
            result = self.on_call(request)
            if asyncio.iscoroutine(result):
                await result
        if self.gate is not None:
            await self.gate.wait()
        item = self.script.pop(0) if self.script else f"{self.default} {len(self.requests)}"
        if isinstance(item, ProviderError):
            raise item
        return ChatReply(item, self.stop_reason, self.usage, self.name)


@dataclass
class FakeSummarizer:
    """A summarizer whose summary lists the folded exchange ids; can fail or block."""

    name: str = "fake-summary"
    prompt_version: str = "fold-v1"
    fail: bool = False
    gate: asyncio.Event | None = None
    calls: list[tuple[str, tuple[Exchange, ...]]] = field(default_factory=list)

    async def summarize(
        self,
        previous: str,
        exchanges: Sequence[Exchange],
        *,
        missing: Sequence[Fact] = (),
        language: str = "es",
        max_tokens: int = 800,
    ) -> SummaryDraft:
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
