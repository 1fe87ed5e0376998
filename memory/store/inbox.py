"""The delivery inbox port: every inbound message is durable here before it is
acknowledged to its channel, and stays until its reply has been delivered."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Literal, Protocol

import structlog

from memory.types import InboxEntry

log = structlog.get_logger(__name__)

Answered = Literal["answered", "done"]


def delivery_digest(key: str, external_id: str) -> str:
    """What `/forget` keeps of a delivery: SHA-256 of `key|external_id`, in hex (the same
    on both backends; PostgreSQL computes it in SQL). A replay of an erased delivery is
    then refused as the redelivery it is, without its text or sender being kept."""
    return hashlib.sha256(f"{key}|{external_id}".encode()).hexdigest()


MARK_RETRY_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # a failed done mark is tried again after these


class DoneMarks:
    """The done marks a backend has started but not yet made durable: the entries they
    cover read as done at once (`in`), `settled` waits for them. Shared by the backends'
    `inbox_delivered` / `inbox_settled`. A mark that fails (the database briefly down) is
    started again after `MARK_RETRY_S`, the entry still reading as done: a reply already
    delivered is not sent again at the next start because its mark was lost."""

    def __init__(self, retry_s: Sequence[float] = MARK_RETRY_S) -> None:
        self._running: dict[int, asyncio.Future[None]] = {}
        self.retry_s = tuple(retry_s)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._running

    def snapshot(self) -> frozenset[int]:
        """The entries marked now. A reader takes it before its query and reads an entry
        as done when it is in the snapshot or still marked after the query: a mark that
        committed while the query ran (the query saw the row before it) still counts."""
        return frozenset(self._running)

    def read(self, entry: InboxEntry, before: frozenset[int]) -> InboxEntry:
        """`entry` as a reader that took `before` ahead of its query should see it."""
        marked = entry.id in before or entry.id in self._running
        return replace(entry, status="done") if marked else entry

    def __getitem__(self, entry_id: int) -> asyncio.Future[None]:
        """The running mark of `entry_id` (tests await it)."""
        return self._running[entry_id]

    def track(self, entry_id: int, start: Callable[[], asyncio.Future[None]]) -> None:
        """Start the mark (`start()` queues it on the backend) and follow it."""
        self._follow(entry_id, start(), start, 0)

    def _follow(
        self,
        entry_id: int,
        mark: asyncio.Future[None],
        start: Callable[[], asyncio.Future[None]],
        attempt: int,
    ) -> None:
        self._running[entry_id] = mark
        mark.add_done_callback(lambda done: self._finished(entry_id, done, start, attempt))

    def _finished(
        self,
        entry_id: int,
        mark: asyncio.Future[None],
        start: Callable[[], asyncio.Future[None]],
        attempt: int,
    ) -> None:
        if self._running.get(entry_id) is not mark:
            return
        del self._running[entry_id]
        if mark.cancelled() or mark.exception() is None:
            return
        error = type(mark.exception()).__name__
        if attempt >= len(self.retry_s):
            log.error("inbox_mark_failed", error=error, attempts=attempt + 1)
            return
        log.warning("inbox_mark_retried", error=error, attempt=attempt + 1)
        again = asyncio.ensure_future(_later(self.retry_s[attempt], start))
        self._follow(entry_id, again, start, attempt + 1)

    async def settled(self) -> None:
        while self._running:  # a retry started meanwhile is waited for too
            await asyncio.gather(*self._running.values(), return_exceptions=True)
            await asyncio.sleep(0)


async def _later(delay: float, start: Callable[[], asyncio.Future[None]]) -> None:
    await asyncio.sleep(delay)
    await start()


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
