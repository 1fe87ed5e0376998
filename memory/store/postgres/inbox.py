"""The delivery inbox of `PostgresStore`: intake (deduped across workers by the inbox's
unique constraint), the per-chat claim that orders a chat's turns across workers, and
the marks: the `DeliveryInbox` port."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg_pool import AsyncConnectionPool

from memory.store.conversation import Intake
from memory.store.inbox import Answered, Claim, DoneMarks
from memory.store.postgres import sql
from memory.store.postgres.locks import ClaimAsk, PostgresChatLocks
from memory.store.postgres.rows import Row, inbox_row
from memory.store.postgres.turn import peek_stamped
from memory.types import InboxEntry

log = structlog.get_logger(__name__)
STAMPS_KEPT = 10_000  # intake stamps awaiting their claim; past it the oldest go (bounded)


class PostgresDeliveryInbox:
    """Mixed into `PostgresStore`, which provides the pool, the locks and the marks."""

    locks: PostgresChatLocks
    _delivering: DoneMarks
    _pool: AsyncConnectionPool[Any]
    _stamps: dict[int, str]  # entry id → the stamp of the state read with its intake
    _claimed: dict[int, str]  # entry id → key, while its chat is held here

    if TYPE_CHECKING:

        def transaction(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]: ...
        async def _all(self, query: str, params: Any) -> list[dict[str, Any]]: ...

    # -- intake -------------------------------------------------------------------------

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        draft = InboxEntry(0, key, external_id, user, kind, text, at)
        (row,) = await self._all(sql.INTAKE, _intake_params(draft, unless_debug=False))
        return _intake(row, draft, unless_debug=False).entry

    async def begin_turn(self, draft: InboxEntry, window: int) -> Intake:
        """The intake (`sql.INTAKE`) and the state read after it, pipelined: one round
        trip. The state's stamp is kept for the claim, which says whether it still holds."""
        async with self._pool.connection() as conn:
            async with conn.pipeline():
                cur = await conn.execute(sql.INTAKE, _intake_params(draft, unless_debug=True))
                state, stamp = await peek_stamped(conn, draft.key, window)
            row = await cur.fetchone()
        assert row is not None
        intake = _intake(row, draft, unless_debug=True)
        if intake.entry is None:
            return intake
        if stamp is not None:
            if len(self._stamps) >= STAMPS_KEPT:
                del self._stamps[next(iter(self._stamps))]
            self._stamps[intake.entry.id] = stamp
        return replace(intake, state=state)

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
        answered and being resent. One another worker ran is not among them. The claim is
        `exclusive` (the state read with the intake still holds) when it is `entry` alone
        and the chat's stamp has not changed since the intake."""
        # The claim is read in the lock's round trip, after the lock is taken: its
        # snapshot sees every earlier holder's commits (READ COMMITTED), so an entry run
        # elsewhere is never run again.
        claim = ClaimAsk(entry.id, resend=entry.status == "answered")
        stamp = self._stamps.pop(entry.id, None)
        async with self.locks.hold(entry.key, claim) as rows:
            claimed = tuple(inbox_row(r) for r in rows)
            alone = [e.id for e in claimed] == [entry.id]
            current = alone and stamp is not None and rows[0]["c_stamp"] == stamp
            for each in claimed:
                self._claimed[each.id] = entry.key
            try:
                yield Claim(claimed, exclusive=current)
            finally:
                for each in claimed:
                    self._claimed.pop(each.id, None)

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        await self._all(sql.INBOX_MARK, mark_params(entry_id, status, replies, at))

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """Mark a delivered entry done in the chat locks' next batch: delivered while its
        chat is held, it rides the unlock's round trip. This store reads it as done at
        once, failures are logged, `inbox_settled` and `close` wait for the marks."""
        mark = self.locks.mark_done(self._claimed.get(entry_id), entry_id, at)
        self._delivering.track(entry_id, mark)

    async def inbox_settled(self) -> None:
        await self._delivering.settled()

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        async with self.transaction() as conn:
            cur = await conn.execute(sql.INBOX_PRUNE, (before,))
            return cur.rowcount


def _intake_params(draft: InboxEntry, *, unless_debug: bool) -> dict[str, object]:
    return {
        "key": draft.key, "external_id": draft.external_id, "user": draft.user,
        "kind": draft.kind, "text": draft.text, "at": draft.received_at,
        "unless_debug": unless_debug,
    }  # fmt: skip


def _intake(row: Row, draft: InboxEntry, *, unless_debug: bool) -> Intake:
    """What `sql.INTAKE` did with `draft`: with `unless_debug` a key in debug mode stored
    nothing."""
    if row["debug"] and unless_debug:
        return Intake(None, debug=True)
    if row["id"] is None:
        return Intake(None, debug=False)
    return Intake(replace(draft, id=int(row["id"])))


def mark_params(
    entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> tuple[object, ...]:
    encoded = json.dumps(list(replies), ensure_ascii=False) if replies else None
    return (status, encoded, at, entry_id)
