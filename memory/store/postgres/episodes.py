"""`EpisodeStore` on PostgreSQL: reset, undo and forget, each one transaction with the
session's or episode's row locked against the same change on another worker."""

from __future__ import annotations

from datetime import datetime

from memory.store.episodes import NewEpisode
from memory.store.postgres import sql
from memory.store.postgres.connection import Conn, PostgresDatabase
from memory.store.postgres.rows import episode_row
from memory.store.postgres.turns import open_episode
from memory.store.states import IntakeStates
from memory.types import Episode


async def reopen_previous(
    conn: Conn, session_id: int, at: datetime, within_s: float
) -> Episode | None:
    """Reopen the previous episode if the current one has folded nothing yet, or an
    automatic reset opened it less than `within_s` ago; its exchanges move back. Runs in
    the caller's transaction, the session row locked against a concurrent reset."""
    await conn.execute(sql.SESSION_LOCK, (session_id,))
    cur = await conn.execute(sql.EPISODES_LAST_TWO, (session_id,))
    rows = [episode_row(r) for r in await cur.fetchall()]
    if len(rows) < 2:
        return None
    current, previous = rows
    cur = await conn.execute(sql.EPISODE_FOLDED, (current.id,))
    folded = await cur.fetchone() is not None
    recent_auto = (current.opened_by or "").startswith("auto") and (
        (at - current.started_at).total_seconds() <= within_s
    )
    if folded and not recent_auto:
        return None
    await conn.execute(sql.SUMMARIES_DROP, (current.id,))
    await conn.execute(sql.EXCHANGES_MOVE, (previous.id, current.id))
    await conn.execute(sql.SESSION_CURRENT, (previous.id, session_id))
    await conn.execute(sql.EPISODE_DROP, (current.id,))
    await conn.execute(sql.EPISODE_REOPEN, (at, previous.id))
    return Episode(
        previous.id, session_id, previous.started_at, opened_by=previous.opened_by, reopened_at=at
    )


class PostgresEpisodes:
    """The episode lifecycle's part of `PostgresStore`."""

    def __init__(self, db: PostgresDatabase, states: IntakeStates) -> None:
        self.db = db
        self.states = states

    async def start_episode(self, new: NewEpisode) -> Episode:
        """Close the current episode (its summaries stay as its record) and open a new one."""
        try:
            session_id, opened_by, signals, at, carry_over = (
                new.session_id, new.opened_by, new.signals, new.at, new.carry_over
            )  # fmt: skip
            async with self.db.transaction() as conn:
                cur = await conn.execute(sql.SESSION_LOCK, (session_id,))
                row = await cur.fetchone()
                if row is not None and row["current_episode_id"] is not None:
                    await conn.execute(
                        sql.EPISODE_CLOSE, (at, opened_by, row["current_episode_id"])
                    )
                new_id = await open_episode(conn, session_id, opened_by, signals, at, carry_over)
            return Episode(
                new_id, session_id, at, opened_by=opened_by, carry_over=tuple(carry_over)
            )
        finally:
            self.states.void_session(new.session_id)

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        """Reopen the previous episode (see `reopen_previous`)."""
        try:
            async with self.db.transaction() as conn:
                return await reopen_previous(conn, session_id, at, within_s)
        finally:
            self.states.void_session(session_id)

    async def forget(self, key: str) -> int:
        """Erase every row of `key` in one transaction (cascading to episodes, exchanges,
        summaries and their recall vectors). A fold in flight on another worker either
        committed first (and is erased with the rest) or finds its episode gone."""
        try:
            async with self.db.transaction() as conn:
                removed = (await conn.execute(sql.FORGET_INBOX, (key,))).rowcount
                removed += (await conn.execute(sql.FORGET_SESSION, (key,))).rowcount
            return removed
        finally:
            self.states.void_key(key)

    async def erased(self, wait_s: float = 0.0) -> bool:
        """On PostgreSQL a forget is complete when its transaction commits: no reader can
        see the rows again and no snapshot holds up the erasure. The dead tuples' bytes
        stay in table pages until autovacuum reuses them (README: what forget guarantees)."""
        return True
