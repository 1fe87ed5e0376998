"""Operator and erasure queries of `SQLiteStore`: listings, export, forget.

Not on the turn path; kept apart so the store module stays about the turn.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import aiosqlite

from memory.store.protocols import SessionInfo
from memory.store.sqlite.rows import episode_row, exchange_row
from memory.types import Episode, Exchange

EXCHANGE_COLS = "id, episode_id, user_text, reply_text, signal, noise_reason, created_at"
EPISODE_COLS = "id, session_id, started_at, closed_at, close_reason, opened_by, reopened_at"


class SQLiteOperatorQueries:
    """Mixed into `SQLiteStore`, which provides the connections and the lock."""

    _r: aiosqlite.Connection
    _w: aiosqlite.Connection
    _lock: asyncio.Lock

    if TYPE_CHECKING:

        def transaction(self) -> AbstractAsyncContextManager[aiosqlite.Connection]: ...

    async def _fetch_exchanges(self, sql: str, params: tuple[Any, ...]) -> list[Exchange]:
        return [exchange_row(row) for row in await self._r.execute_fetchall(sql, params)]

    async def episodes(self, key: str) -> list[Episode]:
        sql = (
            f"SELECT {', '.join('e.' + c.strip() for c in EPISODE_COLS.split(','))}"
            " FROM episodes e JOIN sessions s ON s.id = e.session_id WHERE s.key = ? ORDER BY e.id"
        )
        async with self._r.execute(sql, (key,)) as cur:
            return [episode_row(row) for row in await cur.fetchall()]

    async def all_exchanges(self, key: str) -> list[Exchange]:
        """Every exchange of a key, noise included (operators and export only)."""
        return await self._fetch_exchanges(
            f"SELECT {', '.join('x.' + c.strip() for c in EXCHANGE_COLS.split(','))}"
            " FROM exchanges x JOIN sessions s ON s.id = x.session_id WHERE s.key = ?"
            " ORDER BY x.id",
            (key,),
        )

    # -- operators and erasure ----------------------------------------------------------

    async def sessions(self) -> list[SessionInfo]:
        sql = (
            "SELECT s.key, s.created_at, s.last_activity_at, s.debug,"
            " (SELECT COUNT(*) FROM exchanges x WHERE x.session_id = s.id),"
            " (SELECT COUNT(*) FROM exchanges x WHERE x.session_id = s.id AND x.signal = 0),"
            " (SELECT COUNT(*) FROM episodes e WHERE e.session_id = s.id),"
            " (SELECT COUNT(*) FROM summaries m JOIN episodes e ON e.id = m.episode_id"
            "   WHERE e.session_id = s.id)"
            " FROM sessions s ORDER BY COALESCE(s.last_activity_at, s.created_at) DESC"
        )
        async with self._r.execute(sql) as cur:
            rows = await cur.fetchall()
        return [
            SessionInfo(
                r[0],
                datetime.fromisoformat(r[1]),
                datetime.fromisoformat(r[2]) if r[2] else None,
                int(r[4]),
                int(r[5]),
                int(r[6]),
                int(r[7]),
                bool(r[3]),
            )
            for r in rows
        ]

    async def export(self, key: str) -> dict[str, object]:
        """Every stored row of `key`, as plain JSON-able data (the right of access)."""
        out: dict[str, object] = {"key": key}
        queries = {
            "session": ("SELECT * FROM sessions WHERE key = ?", (key,)),
            "episodes": (
                "SELECT e.* FROM episodes e JOIN sessions s ON s.id = e.session_id"
                " WHERE s.key = ? ORDER BY e.id",
                (key,),
            ),
            "exchanges": (
                "SELECT x.* FROM exchanges x JOIN sessions s ON s.id = x.session_id"
                " WHERE s.key = ? ORDER BY x.id",
                (key,),
            ),
            "summaries": (
                "SELECT m.* FROM summaries m JOIN episodes e ON e.id = m.episode_id"
                " JOIN sessions s ON s.id = e.session_id WHERE s.key = ?"
                " ORDER BY m.episode_id, m.version",
                (key,),
            ),
            "inbox": ("SELECT * FROM inbox WHERE session_key = ? ORDER BY id", (key,)),
        }
        for name, (sql, params) in queries.items():
            async with self._r.execute(sql, params) as cur:
                cols = [d[0] for d in cur.description]
                rows = [dict(zip(cols, row, strict=True)) for row in await cur.fetchall()]
            out[name] = rows[0] if name == "session" and rows else rows
        return out

    async def forget(self, key: str) -> int:
        """Erase every row of `key` for real: secure_delete zeroes freed pages and the WAL
        is checkpointed and truncated, so no byte of it is left in the database files."""
        async with self.transaction() as db:
            cur = await db.execute("DELETE FROM inbox WHERE session_key = ?", (key,))
            removed = cur.rowcount
            cur = await db.execute("DELETE FROM sessions WHERE key = ?", (key,))
            removed += cur.rowcount
        async with self._lock:
            await self._w.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed
