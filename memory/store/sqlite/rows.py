"""Rows → value types, by column name (`sqlite3.Row`), never by position.

A query that joins tables prefixes each table's columns (`e_id`, `m_text`): `columns`
writes that select list and the mappers take the same prefix.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

from memory.store.operator import SessionInfo
from memory.types import Episode, Exchange, InboxEntry, SummaryVersion

EXCHANGE_COLS = (
    "id",
    "episode_id",
    "user_text",
    "reply_text",
    "signal",
    "noise_reason",
    "created_at",
)
EPISODE_COLS = (
    "id",
    "session_id",
    "started_at",
    "closed_at",
    "close_reason",
    "opened_by",
    "reopened_at",
    "carry_over",
)
SUMMARY_COLS = (
    "id",
    "episode_id",
    "version",
    "text",
    "checkpoint",
    "prompt_version",
    "model",
    "source_from",
    "source_to",
    "input_tokens",
    "output_tokens",
    "round",
    "created_at",
)
INBOX_COLS = (
    "id",
    "session_key",
    "external_id",
    "user_ref",
    "kind",
    "text",
    "received_at",
    "status",
    "replies",
)

USAGE_COLS = (
    "session_id, purpose, model, input_tokens, output_tokens, cached_tokens,"
    " exchange_id, summary_id, created_at"
)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


def one(db: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """The first row or None, with the statement run to its end: a statement left
    mid-step keeps its read snapshot open and makes COMMIT fail."""
    rows = db.execute(sql, params).fetchall()
    return rows[0] if rows else None


def debug_users(stored: str | None) -> frozenset[str]:
    return frozenset(json.loads(stored)) if stored else frozenset()


def columns(cols: tuple[str, ...], table: str = "", prefix: str = "") -> str:
    """`e.id AS e_id, e.session_id AS e_session_id, …` (or plain `id, session_id, …`)."""
    qualified = f"{table}." if table else ""
    return ", ".join(f"{qualified}{c} AS {prefix}{c}" if prefix else qualified + c for c in cols)


def _dt(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def exchange_row(row: sqlite3.Row) -> Exchange:
    return Exchange(
        id=int(row["id"]),
        episode_id=int(row["episode_id"]),
        user_text=row["user_text"],
        reply_text=row["reply_text"],
        signal=bool(row["signal"]),
        noise_reason=row["noise_reason"],
        created_at=_dt(row["created_at"]),
    )


def summary_row(row: sqlite3.Row, prefix: str = "") -> SummaryVersion:
    def col(name: str) -> Any:
        return row[prefix + name]

    return SummaryVersion(
        id=int(col("id")),
        episode_id=int(col("episode_id")),
        version=int(col("version")),
        text=col("text"),
        checkpoint=int(col("checkpoint")),
        prompt_version=col("prompt_version"),
        model=col("model"),
        source_from=int(col("source_from")),
        source_to=int(col("source_to")),
        input_tokens=int(col("input_tokens")),
        output_tokens=int(col("output_tokens")),
        round=int(col("round")),
        created_at=_dt(col("created_at")),
    )


def episode_row(row: sqlite3.Row, prefix: str = "") -> Episode:
    started = _dt(row[prefix + "started_at"])
    assert started is not None
    return Episode(
        id=int(row[prefix + "id"]),
        session_id=int(row[prefix + "session_id"]),
        started_at=started,
        closed_at=_dt(row[prefix + "closed_at"]),
        close_reason=row[prefix + "close_reason"],
        opened_by=row[prefix + "opened_by"],
        reopened_at=_dt(row[prefix + "reopened_at"]),
        carry_over=carry_pairs(row[prefix + "carry_over"]),
    )


def carry_pairs(raw: str | None) -> tuple[tuple[str, str], ...]:
    """The stored carry-over (a JSON list of [kind, value]) as pairs."""
    return tuple((str(k), str(v)) for k, v in json.loads(raw)) if raw else ()


def inbox_row(row: sqlite3.Row) -> InboxEntry:
    received = _dt(row["received_at"])
    assert received is not None
    return InboxEntry(
        id=int(row["id"]),
        key=row["session_key"],
        external_id=row["external_id"],
        user=row["user_ref"],
        kind=row["kind"],
        text=row["text"],
        received_at=received,
        status=row["status"],
        replies=tuple(json.loads(row["replies"])) if row["replies"] else (),
    )


def session_info_row(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        key=row["key"],
        created_at=datetime.fromisoformat(row["created_at"]),
        last_activity=_dt(row["last_activity_at"]),
        exchanges=int(row["exchanges"]),
        noise=int(row["noise"]),
        episodes=int(row["episodes"]),
        summary_versions=int(row["summary_versions"]),
        debug=bool(row["debug"]),
    )
