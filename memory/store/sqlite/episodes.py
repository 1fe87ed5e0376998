"""`EpisodeStore` on SQLite: reset, undo and forget as functions over a raw
`sqlite3.Connection`, and the part of `SQLiteStore` running them (a forget then wipes
the WAL's copies in the background: `erased` says when they are gone).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from functools import partial

from memory.store.episodes import NewEpisode
from memory.store.inbox import delivery_digest
from memory.store.sqlite import recall_index
from memory.store.sqlite.connection import GroupCommitWriter
from memory.store.sqlite.recall import SQLiteRecall
from memory.store.sqlite.rows import EPISODE_COLS, columns, episode_row, iso, one
from memory.store.sqlite.turns import open_episode
from memory.store.states import IntakeStates
from memory.types import Episode


def start_episode(db: sqlite3.Connection, *, new: NewEpisode) -> Episode:
    session_id, opened_by, signals, at, carry_over = (
        new.session_id, new.opened_by, new.signals, new.at, new.carry_over
    )  # fmt: skip
    db.execute(
        "UPDATE episodes SET closed_at = ?, close_reason = ? WHERE id ="
        " (SELECT current_episode_id FROM sessions WHERE id = ?)",
        (iso(at), opened_by, session_id),
    )
    new_id = open_episode(
        db,
        session_id=session_id,
        at=at,
        opened_by=opened_by,
        signals=signals,
        carry_over=carry_over,
        previous=new.previous,
    )
    return Episode(
        new_id,
        session_id,
        at,
        opened_by=opened_by,
        carry_over=tuple(carry_over),
        previous=new.previous,
    )


def undo_reset(
    db: sqlite3.Connection, *, session_id: int, at: datetime, within_s: float
) -> Episode | None:
    sql = (
        f"SELECT {columns(EPISODE_COLS)} FROM episodes WHERE session_id = ?"
        " ORDER BY id DESC LIMIT 2"
    )
    rows = [episode_row(r) for r in db.execute(sql, (session_id,)).fetchall()]
    if len(rows) < 2:
        return None
    current, previous = rows
    folded = one(db, "SELECT 1 FROM summaries WHERE episode_id = ? LIMIT 1", (current.id,))
    recent_auto = (current.opened_by or "").startswith("auto") and (
        (at - current.started_at).total_seconds() <= within_s
    )
    if folded is not None and not recent_auto:
        return None
    db.execute("DELETE FROM summaries WHERE episode_id = ?", (current.id,))
    db.execute(
        "UPDATE exchanges SET episode_id = ? WHERE episode_id = ?", (previous.id, current.id)
    )
    db.execute(
        "UPDATE sessions SET current_episode_id = ? WHERE id = ?", (previous.id, session_id)
    )
    db.execute("DELETE FROM episodes WHERE id = ?", (current.id,))
    db.execute(
        "UPDATE episodes SET closed_at = NULL, close_reason = NULL, reopened_at = ? WHERE id = ?",
        (iso(at), previous.id),
    )
    return Episode(
        previous.id, session_id, previous.started_at, opened_by=previous.opened_by, reopened_at=at
    )


def forget(db: sqlite3.Connection, *, key: str) -> int:
    ids = db.execute("SELECT external_id FROM inbox WHERE session_key = ?", (key,)).fetchall()
    at = iso(datetime.now(UTC))
    db.executemany(
        "INSERT OR IGNORE INTO erased_deliveries (digest, erased_at) VALUES (?, ?)",
        [(delivery_digest(key, row[0]), at) for row in ids],
    )
    removed = db.execute("DELETE FROM inbox WHERE session_key = ?", (key,)).rowcount
    recall_index.forget_key(db, key)
    return removed + db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount


class SQLiteEpisodes:
    """The episode lifecycle's part of `SQLiteStore`; what the recall index holds in
    memory is dropped where exchanges move or go."""

    def __init__(self, db: GroupCommitWriter, recall: SQLiteRecall, states: IntakeStates) -> None:
        self.db = db
        self.recall = recall
        self.states = states

    async def start_episode(self, new: NewEpisode) -> Episode:
        try:
            return await self.db.atomic(partial(start_episode, new=new))
        finally:
            self.states.void_session(new.session_id)

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        undo = partial(undo_reset, session_id=session_id, at=at, within_s=within_s)
        try:
            return await self.db.atomic(undo)
        finally:  # its exchanges may have moved episode
            self.recall.hot.drop(session_id)
            self.states.void_session(session_id)

    async def forget(self, key: str) -> int:
        """Erase every row of `key`: secure_delete zeroes the freed pages at once; the
        copies still in the WAL go when it is checkpointed and truncated, in the
        background (`erased` says when), since a reader holding an old snapshot may
        prevent that for as long as it stays open."""
        try:
            removed = await self.db.atomic(partial(forget, key=key))
        finally:  # and its session id may be given to a new key
            self.recall.hot.clear()
            self.recall.stats.clear()
            self.states.clear()
        await self.db.wipe_soon()
        return removed

    async def erased(self, wait_s: float = 0.0) -> bool:
        return await self.db.wiped(wait_s)
