"""Delivery: where a chat's replies go (one `Outbox` per channel), and an inbox entry's
"done" mark once its reply has landed.

A channel adapter registers its outbox; the handler hands every reply here. An outbox
that retries in the background returns a future, and the entry is marked done only
when that future resolves; if it never does, the entry stays answered and is sent again
at the next start (`ConversationHandler.recover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from memory.store.inbox import DeliveryInbox
from memory.types import SessionKey
from providers.streaming import TextSink


class Outbox(Protocol):
    """Where replies for one channel go."""

    async def send(self, key: SessionKey, texts: Sequence[str]) -> asyncio.Future[None] | None:
        """Deliver, or return a future for a delivery that goes on in the background."""
        ...

    def working(self, key: SessionKey) -> AbstractAsyncContextManager[None]: ...


@runtime_checkable
class LiveOutbox(Outbox, Protocol):
    """An outbox that can show a reply while it is written (Telegram drafts)."""

    def live(self, key: SessionKey) -> AbstractAsyncContextManager[TextSink | None]: ...


class Delivery:
    def __init__(self, inbox: DeliveryInbox, settled: Callable[[int], None]) -> None:
        self.inbox = inbox
        self.outboxes: dict[str, Outbox] = {}
        # Told apart once, at registration: a runtime protocol check costs tens of µs.
        self.live_outboxes: dict[str, LiveOutbox] = {}
        self.later: dict[int, asyncio.Future[None]] = {}  # retried in the background
        self._settled = settled  # told each entry id whose background delivery ended

    def register(self, channel: str, outbox: Outbox) -> None:
        """Where `channel`'s replies go."""
        self.outboxes[channel] = outbox
        if isinstance(outbox, LiveOutbox):
            self.live_outboxes[channel] = outbox
        else:
            self.live_outboxes.pop(channel, None)

    async def send(self, key: SessionKey, texts: Sequence[str]) -> asyncio.Future[None] | None:
        """Send `texts` to the chat; a future when the outbox goes on in the background."""
        outbox = self.outboxes.get(key.channel)
        if outbox is not None and texts:
            return await outbox.send(key, texts)
        return None

    async def reply(self, entry_id: int, key: SessionKey, texts: Sequence[str]) -> None:
        """Send an entry's replies, then mark it done: at once (the mark joins the next
        batch of writes; the store reads the entry as done meanwhile, so a redelivery is
        not sent again), or when a background delivery lands."""
        later = await self.send(key, texts)
        if later is None:
            self.inbox.inbox_delivered(entry_id, at=_now())
            return

        async def mark() -> None:
            with contextlib.suppress(Exception):
                await later
                self.inbox.inbox_delivered(entry_id, at=_now())

        marked = asyncio.ensure_future(mark())
        self.later[entry_id] = marked
        marked.add_done_callback(functools.partial(self._marked, entry_id))

    def _marked(self, entry_id: int, _done: asyncio.Future[None]) -> None:
        self.later.pop(entry_id, None)
        self._settled(entry_id)

    async def drain(self) -> None:
        """Wait for the deliveries still retrying in the background."""
        await asyncio.gather(*self.later.values(), return_exceptions=True)

    @contextlib.asynccontextmanager
    async def working(self, key: SessionKey) -> AsyncIterator[None]:
        """The channel's "typing…" while a reply is made."""
        outbox = self.outboxes.get(key.channel)
        if outbox is None:
            yield
            return
        async with outbox.working(key):
            yield

    @contextlib.asynccontextmanager
    async def live(self, key: SessionKey) -> AsyncIterator[TextSink | None]:
        """Where the reply is shown while it streams, when the channel can."""
        outbox = self.live_outboxes.get(key.channel)
        if outbox is None:
            yield None
            return
        async with outbox.live(key) as on_text:
            yield on_text


def _now() -> datetime:
    return datetime.now(UTC)
