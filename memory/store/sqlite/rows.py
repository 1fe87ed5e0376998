"""Row → value-type conversions for `SQLiteStore`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory.types import Episode, Exchange, InboxEntry, SummaryVersion


def _dt(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def exchange_row(row: Sequence[Any]) -> Exchange:
    return Exchange(int(row[0]), int(row[1]), row[2], row[3], bool(row[4]), row[5], _dt(row[6]))


def summary_row(row: Sequence[Any]) -> SummaryVersion:
    return SummaryVersion(
        int(row[0]),
        int(row[1]),
        int(row[2]),
        row[3],
        int(row[4]),
        row[5],
        row[6],
        int(row[7]),
        int(row[8]),
        int(row[9]),
        int(row[10]),
        int(row[11]),
        _dt(row[12]),
    )


def episode_row(row: Sequence[Any]) -> Episode:
    started = _dt(row[2])
    assert started is not None
    return Episode(int(row[0]), int(row[1]), started, _dt(row[3]), row[4], row[5], _dt(row[6]))


def inbox_row(row: Sequence[Any]) -> InboxEntry:
    received = _dt(row[6])
    assert received is not None
    replies = tuple(json.loads(row[8])) if row[8] else ()
    return InboxEntry(
        int(row[0]), row[1], row[2], row[3], row[4], row[5], received, row[7], replies
    )
