"""Operator queries of `SQLiteStore`: listings, export, every exchange of a key, schema
facts. Not on the turn path: plain reads on the reader connection."""

from __future__ import annotations

import sqlite3
from typing import Any

from memory.store.conversation import SessionInfo
from memory.store.sqlite.rows import (
    EPISODE_COLS,
    EXCHANGE_COLS,
    columns,
    episode_row,
    exchange_row,
    session_info_row,
)
from memory.types import Episode, Exchange

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
