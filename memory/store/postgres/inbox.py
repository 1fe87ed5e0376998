"""The delivery inbox of `PostgresStore`: intake (deduped across workers by the inbox's
unique constraint), the per-chat claim that orders a chat's turns across workers, and
the marks: the `DeliveryInbox` port."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg
import structlog

from memory.store.conversation import Intake
from memory.store.inbox import Answered, Claim, DoneMarks
from memory.store.postgres import sql
from memory.store.postgres.locks import PostgresChatLocks
from memory.store.postgres.rows import inbox_row
from memory.store.postgres.turn import ensure_session
from memory.types import InboxEntry, TurnState

log = structlog.get_logger(__name__)


class PostgresDeliveryInbox:
    """Mixed into `PostgresStore`, which provides the pool, the locks and the marks."""

    locks: PostgresChatLocks
    _delivering: DoneMarks

    if TYPE_CHECKING:

        def transaction(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]: ...
        async def _all(self, query: str, params: Any) -> list[dict[str, Any]]: ...
        async def peek_state(self, key: str, window: int) -> TurnState | None: ...

    # -- intake -------------------------------------------------------------------------

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        return (await self._intake(key, external_id, user, kind, text, at, False)).entry

    async def begin_turn(
        self,
        key: str,
        external_id: str,
        user: str,
        kind: str,
        text: str,
        at: datetime,
        window: int,
    ) -> Intake:
        """The debug flag read and the insert are one statement; the state is read after
        (several workers: a handler re-reads it under the chat's claim)."""
        intake = await self._intake(key, external_id, user, kind, text, at, True)
        if intake.entry is None:
            return intake
        return Intake(intake.entry, debug=False, state=await self.peek_state(key, window))

    async def _intake(
        self,
        key: str,
        external_id: str,
        user: str,
        kind: str,
        text: str,
        at: datetime,
        unless_debug: bool,
    ) -> Intake:
        """Store the message once (the inbox's unique constraint dedupes deliveries to
        several workers) in one statement that also reads the debug flag: with
        `unless_debug` a key in debug mode stores nothing. A new key's session and first
        episode follow (a crash in between leaves an entry whose turn creates them)."""
        (row,) = await self._all(
            sql.INTAKE,
            {
                "key": key, "external_id": external_id, "user": user, "kind": kind,
                "text": text, "at": at, "unless_debug": unless_debug,
            },
        )  # fmt: skip
        if row["debug"] and unless_debug:
            return Intake(None, debug=True)
        if row["id"] is None:
            return Intake(None, debug=False)
        entry = InboxEntry(int(row["id"]), key, external_id, user, kind, text, at)
        if row["episode_id"] is None:  # a new chat: its session and first episode
            async with self.transaction() as conn:
                await ensure_session(conn, key, at)
        return Intake(entry, debug=False)

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        params = {"key": key, "external_id": external_id, "reason": reason, "at": at}
        return bool(await self._all(sql.INBOX_REJECT, params))

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        rows = await self._all(sql.INBOX_GET, (key, external_id))
        if not rows:
            return None
        entry = inbox_row(rows[0])
        return replace(entry, status="done") if entry.id in self._delivering else entry

    async def inbox_unfinished(self) -> list[InboxEntry]:
        rows = await self._all(sql.INBOX_UNFINISHED, ())
        return [e for e in map(inbox_row, rows) if e.id not in self._delivering]

    @asynccontextmanager
    async def claim_turn(self, entry: InboxEntry) -> AsyncIterator[Claim]:
        """Hold the chat against every other worker (a per-chat advisory lock) and yield
        its pending entries up to `entry`, oldest first; `entry` itself also when it is
        answered and being resent. One another worker ran is not among them."""
        async with self.locks.hold(entry.key) as conn:
            # A statement after the lock is taken: its snapshot sees every earlier holder's
            # commits (READ COMMITTED), so an entry run elsewhere is never run again.
            params = {"key": entry.key, "upto": entry.id, "resend": entry.status == "answered"}
            cur = await conn.execute(sql.INBOX_CLAIM, params)
            claimed = tuple(inbox_row(r) for r in await cur.fetchall())
            yield Claim(claimed, exclusive=False)

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        await self._all(sql.INBOX_MARK, mark_params(entry_id, status, replies, at))

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """Mark a delivered entry done in the background (a pooled connection has no
        batch to ride with); this store reads it as done at once, failures are logged,
        `inbox_settled` and `close` wait for the marks still running."""
        task = asyncio.get_running_loop().create_task(
            self.inbox_mark(entry_id, "done", at=at), name="inbox-done"
        )
        self._delivering.track(entry_id, task)

    async def inbox_settled(self) -> None:
        await self._delivering.settled()

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        async with self.transaction() as conn:
            cur = await conn.execute(sql.INBOX_PRUNE, (before,))
            return cur.rowcount


def mark_params(
    entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> tuple[object, ...]:
    encoded = json.dumps(list(replies), ensure_ascii=False) if replies else None
    return (status, encoded, at, entry_id)
