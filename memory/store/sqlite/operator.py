"""`OperatorQueries` and `UsageQueries` on SQLite: listings, export, every exchange of
a key, usage totals, schema facts. Not on the turn path: plain reads on the reader.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from functools import partial
from typing import Any

from memory.store.operator import SessionInfo
from memory.store.sqlite.connection import GroupCommitWriter
from memory.store.sqlite.rows import (
    EPISODE_COLS,
    EXCHANGE_COLS,
    columns,
    episode_row,
    exchange_row,
    iso,
    session_info_row,
)
from memory.store.sqlite.summaries import summary_versions
from memory.store.usage import UsageTotal
from memory.types import Episode, Exchange, SummaryVersion

_SESSIONS_SQL = (
    "SELECT s.key, s.created_at, s.last_activity_at, s.debug,"
    " (SELECT COUNT(*) FROM exchanges x WHERE x.session_id = s.id) AS exchanges,"
    " (SELECT COUNT(*) FROM exchanges x WHERE x.session_id = s.id AND x.signal = 0) AS noise,"
    " (SELECT COUNT(*) FROM episodes e WHERE e.session_id = s.id) AS episodes,"
    " (SELECT COUNT(*) FROM summaries m JOIN episodes e ON e.id = m.episode_id"
    "   WHERE e.session_id = s.id) AS summary_versions"
    " FROM sessions s ORDER BY COALESCE(s.last_activity_at, s.created_at) DESC"
)
_EXPORT_SQL = {
    "session": "SELECT * FROM sessions WHERE key = ?",
    "episodes": "SELECT e.* FROM episodes e JOIN sessions s ON s.id = e.session_id"
    " WHERE s.key = ? ORDER BY e.id",
    "exchanges": "SELECT x.* FROM exchanges x JOIN sessions s ON s.id = x.session_id"
    " WHERE s.key = ? ORDER BY x.id",
    "summaries": "SELECT m.* FROM summaries m JOIN episodes e ON e.id = m.episode_id"
    " JOIN sessions s ON s.id = e.session_id WHERE s.key = ? ORDER BY m.episode_id, m.version",
    "inbox": "SELECT * FROM inbox WHERE session_key = ? ORDER BY id",
}
_TOTALS = """
    SELECT s.key AS key, u.purpose AS purpose, u.model AS model, COUNT(*) AS calls,
           SUM(u.input_tokens) AS input_tokens, SUM(u.output_tokens) AS output_tokens,
           SUM(u.cached_tokens) AS cached_tokens, MIN(u.created_at) AS first_at,
           MAX(u.created_at) AS last_at
    FROM usage u JOIN sessions s ON s.id = u.session_id
    WHERE (:key IS NULL OR s.key = :key) AND (:since IS NULL OR u.created_at >= :since)
    GROUP BY s.key, u.purpose, u.model
    ORDER BY s.key, u.purpose, u.model
"""


def episodes(db: sqlite3.Connection, *, key: str) -> list[Episode]:
    sql = (
        f"SELECT {columns(EPISODE_COLS, 'e')} FROM episodes e"
        " JOIN sessions s ON s.id = e.session_id WHERE s.key = ? ORDER BY e.id"
    )
    return [episode_row(row) for row in db.execute(sql, (key,))]


def all_exchanges(db: sqlite3.Connection, *, key: str) -> list[Exchange]:
    """Every exchange of a key, noise included (operators and export only)."""
    sql = (
        f"SELECT {columns(EXCHANGE_COLS, 'x')} FROM exchanges x"
        " JOIN sessions s ON s.id = x.session_id WHERE s.key = ? ORDER BY x.id"
    )
    return [exchange_row(row) for row in db.execute(sql, (key,))]


def sessions(db: sqlite3.Connection) -> list[SessionInfo]:
    return [session_info_row(row) for row in db.execute(_SESSIONS_SQL)]


def export(db: sqlite3.Connection, *, key: str) -> dict[str, object]:
    """Every stored row of `key`, as plain JSON-able data (the right of access)."""
    out: dict[str, object] = {"key": key}
    for name, sql in _EXPORT_SQL.items():
        rows: list[dict[str, Any]] = [dict(row) for row in db.execute(sql, (key,))]
        out[name] = rows[0] if name == "session" and rows else rows
    return out


def applied_migrations(db: sqlite3.Connection) -> list[str]:
    return [
        row["name"] for row in db.execute("SELECT name FROM schema_migrations ORDER BY version")
    ]


def synchronous(db: sqlite3.Connection) -> str:
    """The `synchronous` setting as SQLite reports it ("normal", "full")."""
    row = one_value(db, "PRAGMA synchronous")
    names = {0: "off", 1: "normal", 2: "full", 3: "extra"}
    return names.get(int(row), str(row)) if row is not None else "unknown"


def one_value(db: sqlite3.Connection, sql: str) -> Any:
    rows = db.execute(sql).fetchall()
    return rows[0][0] if rows else None


def usage_totals(
    db: sqlite3.Connection, *, key: str | None, since: datetime | None
) -> list[UsageTotal]:
    """Calls and tokens per key, purpose and model; `since` is inclusive."""
    params = {"key": key, "since": iso(since) if since else None}
    cur = db.execute(_TOTALS, params)
    names = [column[0] for column in cur.description]
    rows = [dict(zip(names, values, strict=True)) for values in cur.fetchall()]
    return [UsageTotal.of_row(row, datetime.fromisoformat) for row in rows]


class SQLiteOperatorQueries:
    """The operators' part of `SQLiteStore`."""

    def __init__(self, db: GroupCommitWriter, path: str) -> None:
        self.db = db
        self.path = path

    async def describe(self) -> str:
        migrations = await self.db.read(applied_migrations)
        sync = await self.synchronous()
        return f"sqlite {self.path} ({len(migrations)} migrations, WAL, synchronous={sync})"

    async def ping(self) -> bool:
        async with self.db.reader.execute("SELECT 1") as cur:
            return (await cur.fetchone()) is not None

    async def synchronous(self) -> str:
        return await self.db.exclusive(synchronous)

    async def applied_migrations(self) -> list[str]:
        return await self.db.read(applied_migrations)

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        return await self.db.read(partial(summary_versions, episode_id=episode_id))

    async def episodes(self, key: str) -> list[Episode]:
        return await self.db.read(partial(episodes, key=key))

    async def all_exchanges(self, key: str) -> list[Exchange]:
        return await self.db.read(partial(all_exchanges, key=key))

    async def sessions(self) -> list[SessionInfo]:
        return await self.db.read(sessions)

    async def export(self, key: str) -> dict[str, object]:
        return await self.db.read(partial(export, key=key))

    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        return await self.db.read(partial(usage_totals, key=key, since=since))
