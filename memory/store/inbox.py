"""The delivery inbox port: every inbound message is durable here before it is
acknowledged to its channel, and stays until its reply has been delivered."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol

import structlog

from memory.types import InboxEntry

log = structlog.get_logger(__name__)

Answered = Literal["answered", "done"]


class DoneMarks:
    """The done marks a backend has started but not yet made durable: the entries they
    cover read as done at once (`in`), failures are logged, `settled` waits for them.
    Shared by the backends' `inbox_delivered` / `inbox_settled`."""

    def __init__(self) -> None:
        self._running: dict[int, asyncio.Future[None]] = {}

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._running

    def __getitem__(self, entry_id: int) -> asyncio.Future[None]:
        """The running mark of `entry_id` (tests await it)."""
        return self._running[entry_id]

    def track(self, entry_id: int, mark: asyncio.Future[None]) -> None:
        self._running[entry_id] = mark
        mark.add_done_callback(lambda done: self._finished(entry_id, done))

    def _finished(self, entry_id: int, mark: asyncio.Future[None]) -> None:
        if self._running.get(entry_id) is mark:
            del self._running[entry_id]
        if not mark.cancelled() and mark.exception() is not None:
            log.error("inbox_mark_failed", error=repr(mark.exception()))

    async def settled(self) -> None:
        await asyncio.gather(*self._running.values(), return_exceptions=True)


class DeliveryInbox(Protocol):
    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        """Store a new message; None when `(key, external_id)` is already in (a redelivery)."""
        ...

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        """Record malformed input as rejected with its reason: acknowledged, never processed,
        never recovered; no session is created, no body kept. False for a redelivery."""
        ...

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None: ...

    async def inbox_unfinished(self) -> list[InboxEntry]:
        """Entries not delivered yet (pending or answered), oldest first."""
        ...

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        """Record the replies of an entry (`answered`) or that they reached the user
        (`done`); durable when this returns."""
        ...

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """The entry's replies reached the user: it is done. This store reads it as done
        at once; it becomes durable by `inbox_settled()` at the latest (a crash before
        that redelivers a delivered reply, as a crash between sending and marking could)."""
        ...

    async def inbox_settled(self) -> None:
        """Wait until every `inbox_delivered` so far is durable."""
        ...

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        ...
