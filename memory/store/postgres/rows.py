"""Rows (psycopg `dict_row`) → our value types, by column name, never by position.

Each mapper reads the columns it needs under a `prefix`, so one joined row can carry
several types (`e_id`, `m_id`, …) without positional slicing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from memory.store import codec
from memory.types import Episode, Exchange, InboxEntry, InboxStatus, SummaryVersion

Row = Mapping[str, Any]


def exchange_row(row: Row, p: str = "") -> Exchange:
    return Exchange(
        int(row[p + "id"]),
        int(row[p + "episode_id"]),
        row[p + "user_text"],
        row[p + "reply_text"],
        bool(row[p + "signal"]),
        row[p + "noise_reason"],
        row[p + "created_at"],
    )


def exchange_of_json(item: Row) -> Exchange:
    """An exchange as `sql.STATE_AND_WINDOW` lists it: a JSON object of `EXCHANGE_COLS`,
    its time in ISO 8601."""
    at = item["created_at"]
    return exchange_row({**item, "created_at": datetime.fromisoformat(at) if at else None})


def summary_row(row: Row, p: str = "") -> SummaryVersion:
    return SummaryVersion(
        int(row[p + "id"]),
        int(row[p + "episode_id"]),
        int(row[p + "version"]),
        row[p + "text"],
        int(row[p + "checkpoint"]),
        row[p + "prompt_version"],
        row[p + "model"],
        int(row[p + "source_from"]),
        int(row[p + "source_to"]),
        int(row[p + "input_tokens"]),
        int(row[p + "output_tokens"]),
        int(row[p + "round"]),
        row[p + "created_at"],
    )


def episode_row(row: Row, p: str = "") -> Episode:
    started: datetime = row[p + "started_at"]
    return Episode(
        int(row[p + "id"]),
        int(row[p + "session_id"]),
        started,
        row[p + "closed_at"],
        row[p + "close_reason"],
        row[p + "opened_by"],
        row[p + "reopened_at"],
        carry_over=carry_pairs(row[p + "carry_over"]),
        previous=codec.decode(row[p + "previous_case"]),
    )


def inbox_row(row: Row) -> InboxEntry:
    replies = tuple(json.loads(row["replies"])) if row["replies"] else ()
    return InboxEntry(
        int(row["id"]),
        row["session_key"],
        row["external_id"],
        row["user_ref"],
        row["kind"],
        row["text"],
        row["received_at"],
        cast(InboxStatus, row["status"]),
        replies,
    )


def plain(row: Row) -> dict[str, object]:
    """A row as JSON-able data (export): timestamps as ISO text, no search vector."""
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name, value in row.items()
        if name != "search"
    }


def carry_pairs(raw: str | None) -> tuple[tuple[str, str], ...]:
    """The stored carry-over (a JSON list of [kind, value]) as pairs."""
    return tuple((str(k), str(v)) for k, v in json.loads(raw)) if raw else ()
