"""`DeliveryInbox` on PostgreSQL: intake (deduped across workers by the inbox's unique
constraint) and the marks; a delivered entry's done mark rides its chat lock's next
round trip (`locks`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from memory.store.inbox import Answered, DoneMarks
from memory.store.postgres import sql
from memory.store.postgres.connection import PostgresDatabase
from memory.store.postgres.rows import Row, inbox_row
from memory.store.turns import Intake
from memory.types import Arrival, InboxEntry

if TYPE_CHECKING:
    from memory.store.postgres.locks import PostgresChatLocks, PostgresClaims


class PostgresInbox:
    """The delivery inbox's part of `PostgresStore`."""

    def __init__(
        self, db: PostgresDatabase, locks: PostgresChatLocks, claims: PostgresClaims
    ) -> None:
        self.db = db
        self.locks = locks
        self.claims = claims  # which chat holds an entry, for its done mark
        self.delivering = DoneMarks()  # done marks running

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        arrival = Arrival(key, external_id, user, kind, text, at)
        (row,) = await self.db.all(sql.INTAKE, intake_params(arrival, unless_debug=False))
        return intake_of(row, arrival, unless_debug=False).entry

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        params = {"key": key, "external_id": external_id, "reason": reason, "at": at}
        return bool(await self.db.all(sql.INBOX_REJECT, params))

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        before = self.delivering.snapshot()
        rows = await self.db.all(sql.INBOX_GET, (key, external_id))
        return self.delivering.read(inbox_row(rows[0]), before) if rows else None

    async def inbox_unfinished(self) -> list[InboxEntry]:
        before = self.delivering.snapshot()
        rows = await self.db.all(sql.INBOX_UNFINISHED, ())
        entries = (self.delivering.read(e, before) for e in map(inbox_row, rows))
        return [e for e in entries if e.status != "done"]

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        await self.db.all(sql.INBOX_MARK, mark_params(entry_id, status, replies, at))

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """Mark a delivered entry done in the chat locks' next batch: delivered while its
        chat is held, it rides the unlock's round trip. This store reads it as done at
        once, failures are logged, `inbox_settled` and `close` wait for the marks."""
        key = self.claims.claimed.get(entry_id)
        self.delivering.track(entry_id, lambda: self.locks.mark_done(key, entry_id, at))

    async def inbox_settled(self) -> None:
        await self.delivering.settled()

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        async with self.db.transaction() as conn:
            cur = await conn.execute(sql.INBOX_PRUNE, (before,))
            await conn.execute(sql.TOMBSTONES_PRUNE, (before,))
            return cur.rowcount


def intake_params(arrival: Arrival, *, unless_debug: bool) -> dict[str, object]:
    return {
        "key": arrival.key, "external_id": arrival.external_id, "user": arrival.user,
        "kind": arrival.kind, "text": arrival.text, "at": arrival.received_at,
        "unless_debug": unless_debug,
    }  # fmt: skip


def intake_of(row: Row, arrival: Arrival, *, unless_debug: bool) -> Intake:
    """What `sql.INTAKE` did with `arrival`: with `unless_debug` a key in debug mode stored
    nothing."""
    if row["debug"] and unless_debug:
        return Intake(None, debug=True)
    if row["id"] is None:
        return Intake(None, debug=False)
    return Intake(arrival.stored(int(row["id"])))


def mark_params(
    entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> tuple[object, ...]:
    encoded = json.dumps(list(replies), ensure_ascii=False) if replies else None
    return (status, encoded, at, entry_id)
