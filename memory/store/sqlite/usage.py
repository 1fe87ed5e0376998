"""Provider-reported usage of every chat call and fold, in SQLite.

Rows are written by the transaction that stores the exchange or the summary version
(one call from `writes.insert_exchange` and `writes.write_summary`), so usage and what it
paid for commit together. They hang off the session, so forget erases them with it.
The table is created by the `usage` migration in `schema`.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from memory.store.conversation import NewExchange, NewSummary
from memory.store.usage import UsageTotal

TABLE = """
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        purpose TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        exchange_id INTEGER REFERENCES exchanges(id) ON DELETE CASCADE,
        summary_id INTEGER REFERENCES summaries(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL
    );
    CREATE INDEX usage_by_session ON usage(session_id, created_at);
    CREATE INDEX usage_by_time ON usage(created_at)
"""

_COLS = (
    "session_id, purpose, model, input_tokens, output_tokens, cached_tokens,"
    " exchange_id, summary_id, created_at"
)


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()  # as the store writes every time: comparable text


def record_chat_usage(db: sqlite3.Connection, exchange_id: int, new: NewExchange) -> None:
    """The chat call's usage, when the provider answered (an error reports none)."""
    if new.usage is None or not new.model:
        return
    u = new.usage
    db.execute(
        f"INSERT INTO usage ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new.session_id,
            "chat",
            new.model,
            u.input_tokens,
            u.output_tokens,
            u.cached_tokens,
            exchange_id,
            None,
            _iso(new.created_at),
        ),
    )


def record_fold_usage(db: sqlite3.Connection, summary_id: int, new: NewSummary) -> None:
    """The fold's usage (all its summary-model calls), with the version it produced."""
    db.execute(
        f"INSERT INTO usage ({_COLS})"
        " SELECT session_id, 'fold', ?, ?, ?, 0, NULL, ?, ? FROM episodes WHERE id = ?",
        (
            new.model,
            new.input_tokens,
            new.output_tokens,
            summary_id,
            _iso(new.created_at),
            new.episode_id,
        ),
    )


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


def usage_totals(
    db: sqlite3.Connection, *, key: str | None, since: datetime | None
) -> list[UsageTotal]:
    """Calls and tokens per key, purpose and model; `since` is inclusive."""
    params = {"key": key, "since": _iso(since) if since else None}
    cur = db.execute(_TOTALS, params)
    names = [column[0] for column in cur.description]
    rows = [dict(zip(names, values, strict=True)) for values in cur.fetchall()]
    return [UsageTotal.of_row(row, datetime.fromisoformat) for row in rows]
