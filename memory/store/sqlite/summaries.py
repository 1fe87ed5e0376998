"""`SummaryStore` on SQLite: the fold's reads and its compare-and-set summary write,
as functions over a raw `sqlite3.Connection`, and the part of `SQLiteStore` running them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from functools import partial

from memory.store.sqlite.connection import GroupCommitWriter
from memory.store.sqlite.rows import SUMMARY_COLS, USAGE_COLS, columns, iso, one, summary_row
from memory.store.sqlite.turns import peek_state, signal_exchanges
from memory.store.states import IntakeStates
from memory.store.summaries import NewSummary
from memory.types import Exchange, SummaryVersion, TurnState

_SUMMARY_INSERT = (
    f"INSERT INTO summaries ({', '.join(SUMMARY_COLS[1:])}, dropped_facts)"
    f" VALUES ({', '.join('?' * len(SUMMARY_COLS))})"
)


def peek_for_fold(
    db: sqlite3.Connection, *, key: str, window: int, opening: int
) -> tuple[TurnState, list[Exchange]] | None:
    """The state and the episode's opening exchanges; the opening is read only when
    something is pending (otherwise there is nothing to fold)."""
    state = peek_state(db, key=key, window=window)
    if state is None:
        return None
    if not state.pending:
        return state, []
    return state, signal_exchanges(db, episode_id=state.episode.id, after=0, limit=opening)


def summary_versions(db: sqlite3.Connection, *, episode_id: int) -> list[SummaryVersion]:
    sql = f"SELECT {columns(SUMMARY_COLS)} FROM summaries WHERE episode_id = ? ORDER BY version"
    return [summary_row(row) for row in db.execute(sql, (episode_id,))]


def write_summary(db: sqlite3.Connection, *, new: NewSummary) -> SummaryVersion | None:
    """The version written on top of `new.base_version`, or None when stale: another
    fold won, the episode closed or is gone, or the checkpoint would move back."""
    latest, checkpoint, rounds, open_episode = one(
        db,
        "SELECT COALESCE(MAX(version), 0), COALESCE(MAX(checkpoint), 0),"
        " COALESCE(MAX(round), 0),"
        " EXISTS (SELECT 1 FROM episodes WHERE id = ? AND closed_at IS NULL)"
        " FROM summaries WHERE episode_id = ?",
        (new.episode_id, new.episode_id),
    ) or (0, 0, 0, False)
    if latest != new.base_version or not open_episode or new.checkpoint < checkpoint:
        return None
    version, round_ = int(latest) + 1, int(rounds) + 1
    written = SummaryVersion(
        0,
        new.episode_id,
        version,
        new.text,
        new.checkpoint,
        new.prompt_version,
        new.model,
        new.source_from,
        new.source_to,
        new.input_tokens,
        new.output_tokens,
        round_,
        new.created_at,
    )
    values = [getattr(written, c) for c in SUMMARY_COLS[1:-1]]
    dropped = json.dumps(list(new.dropped_facts), ensure_ascii=False)
    cur = db.execute(_SUMMARY_INSERT, (*values, iso(new.created_at), dropped))
    assert cur.lastrowid is not None
    record_fold_usage(db, cur.lastrowid, new)
    return replace(written, id=cur.lastrowid)


def record_fold_usage(db: sqlite3.Connection, summary_id: int, new: NewSummary) -> None:
    """The fold's usage (all its summary-model calls), with the version it produced."""
    db.execute(
        f"INSERT INTO usage ({USAGE_COLS})"
        " SELECT session_id, 'fold', ?, ?, ?, 0, NULL, ?, ? FROM episodes WHERE id = ?",
        (
            new.model,
            new.input_tokens,
            new.output_tokens,
            summary_id,
            iso(new.created_at),
            new.episode_id,
        ),
    )


class SQLiteSummaries:
    """The fold's part of `SQLiteStore`."""

    def __init__(self, db: GroupCommitWriter, states: IntakeStates) -> None:
        self.db = db
        self.states = states

    async def peek_for_fold(
        self, key: str, window: int, opening: int
    ) -> tuple[TurnState, list[Exchange]] | None:
        return await self.db.read(partial(peek_for_fold, key=key, window=window, opening=opening))

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        read = partial(
            signal_exchanges, episode_id=episode_id, after=after, upto=upto, limit=limit
        )
        return await self.db.read(read)

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        try:
            return await self.db.atomic(partial(write_summary, new=new))
        finally:
            self.states.void_episode(new.episode_id)
