"""`DeliveryInbox` on SQLite: the inbox statements as functions over a raw
`sqlite3.Connection`, and the part of `SQLiteStore` running them. A delivered entry's
done mark is a lazy write: it rides with the next one, and reads as done meanwhile.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from memory.store.inbox import Answered, DoneMarks, delivery_digest
from memory.store.sqlite.connection import GroupCommitWriter
from memory.store.sqlite.rows import INBOX_COLS, columns, inbox_row, iso
from memory.types import Arrival, InboxEntry

_INBOX_SELECT = f"SELECT {columns(INBOX_COLS)} FROM inbox"
_INBOX_INSERT = (
    "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
    " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_key, external_id) DO NOTHING"
)


def inbox_add(db: sqlite3.Connection, *, arrival: Arrival) -> InboxEntry | None:
    """The arrival as an inbox entry with its new id, or None when its external id is
    already in."""
    digest = delivery_digest(arrival.key, arrival.external_id)
    if db.execute("SELECT 1 FROM erased_deliveries WHERE digest = ?", (digest,)).fetchone():
        return None  # erased by /forget: a replay of it is a redelivery
    at = iso(arrival.received_at)
    row = (arrival.key, arrival.external_id, arrival.user, arrival.kind, arrival.text, at, at)
    cur = db.execute(_INBOX_INSERT, row)
    if cur.rowcount == 0 or cur.lastrowid is None:
        return None
    return arrival.stored(cur.lastrowid)


def inbox_mark(
    db: sqlite3.Connection, *, entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> None:
    db.execute(
        "UPDATE inbox SET status = ?, replies = COALESCE(?, replies), attempts = attempts + 1,"
        " updated_at = ? WHERE id = ?",
        (
            status,
            json.dumps(list(replies), ensure_ascii=False) if replies else None,
            iso(at),
            entry_id,
        ),
    )


def inbox_prune(db: sqlite3.Connection, *, before: datetime) -> int:
    cur = db.execute(
        "DELETE FROM inbox WHERE status IN ('done', 'rejected') AND updated_at < ?",
        (iso(before),),
    )
    db.execute("DELETE FROM erased_deliveries WHERE erased_at < ?", (iso(before),))
    return cur.rowcount


def inbox_reject(
    db: sqlite3.Connection, *, key: str, external_id: str, reason: str, at: datetime
) -> bool:
    cur = db.execute(
        "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
        " updated_at, status, reason) VALUES (?, ?, '', 'rejected', '', ?, ?, 'rejected', ?)"
        " ON CONFLICT (session_key, external_id) DO NOTHING",
        (key, external_id, iso(at), iso(at), reason),
    )
    return cur.rowcount > 0


class SQLiteInbox:
    """The delivery inbox's part of `SQLiteStore`."""

    def __init__(self, db: GroupCommitWriter) -> None:
        self.db = db
        self.delivering = DoneMarks()  # done marks not committed yet

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        arrival = Arrival(key, external_id, user, kind, text, at)
        return await self.db.atomic(partial(inbox_add, arrival=arrival))

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        reject = partial(inbox_reject, key=key, external_id=external_id, reason=reason, at=at)
        return await self.db.atomic(reject)

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        sql = f"{_INBOX_SELECT} WHERE session_key = ? AND external_id = ?"
        before = self.delivering.snapshot()
        rows = list(await self.db.reader.execute_fetchall(sql, (key, external_id)))
        return self.delivering.read(inbox_row(rows[0]), before) if rows else None

    async def inbox_unfinished(self) -> list[InboxEntry]:
        # the partial index inbox_unfinished covers the first term
        sql = f"{_INBOX_SELECT} WHERE status != 'done' AND status != 'rejected' ORDER BY id"
        before = self.delivering.snapshot()
        rows = await self.db.reader.execute_fetchall(sql)
        entries = (self.delivering.read(e, before) for e in map(inbox_row, rows))
        return [e for e in entries if e.status != "done"]

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        mark = partial(inbox_mark, entry_id=entry_id, status=status, replies=replies, at=at)
        await self.db.atomic(mark)

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """The done mark rides with the next write queued (usually the next message's
        intake) or is committed on its own shortly after; meanwhile this store already
        reads the entry as done, so a redelivery is not answered twice."""
        mark = partial(inbox_mark, entry_id=entry_id, status="done", replies=(), at=at)
        self.delivering.track(entry_id, lambda: self.db.lazy(mark))

    async def inbox_settled(self) -> None:
        await self.delivering.settled()

    async def inbox_prune(self, before: datetime) -> int:
        return await self.db.atomic(partial(inbox_prune, before=before))
