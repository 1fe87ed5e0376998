"""The reads of a turn and the episode statements, as plain functions over a raw
`sqlite3.Connection` (`writes` has the turn's writes).

`SQLiteStore` runs each on a connection's thread in one round trip: reads on the reader,
writes as one unit of a group commit. `open_episode` is the one episode insert.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memory.soft_reset import codec
from memory.store.conversation import NewEpisode
from memory.store.sqlite.rows import (
    EPISODE_COLS,
    EXCHANGE_COLS,
    SUMMARY_COLS,
    columns,
    episode_row,
    exchange_row,
    summary_row,
)
from memory.types import Episode, Exchange, PreviousCase, SummaryVersion, TurnState

# Session, current episode, latest summary version and the newest reply of either kind
# (two index seeks on exchanges_window, not a scan), in one statement.
_STATE_SQL = (
    "SELECT s.id AS session_id, s.debug AS debug, s.debug_users AS debug_users,"
    " s.last_activity_at AS last_activity_at,"
    f" {columns(EPISODE_COLS, 'e', 'e_')},"
    " (SELECT x.reply_text FROM exchanges x WHERE x.id = MAX("
    "   COALESCE((SELECT MAX(id) FROM exchanges WHERE episode_id = e.id AND signal = 0), 0),"
    "   COALESCE((SELECT MAX(id) FROM exchanges WHERE episode_id = e.id AND signal = 1), 0)))"
    " AS last_reply,"
    f" {columns(SUMMARY_COLS, 'm', 'm_')}"
    " FROM sessions s JOIN episodes e ON e.id = s.current_episode_id"
    " LEFT JOIN summaries m ON m.id = (SELECT id FROM summaries WHERE episode_id = e.id"
    "   ORDER BY version DESC LIMIT 1)"
    " WHERE s.key = ?"
)
# The last `window` signal exchanges and the pending ones before them: every signal row
# with id ≥ min(checkpoint + 1, window start), one range scan of exchanges_window.
_WINDOW_SQL = (
    f"SELECT {columns(EXCHANGE_COLS)} FROM exchanges WHERE episode_id = ? AND signal = 1"
    " AND id >= MIN(? + 1, COALESCE((SELECT id FROM exchanges WHERE episode_id = ?"
    " AND signal = 1 ORDER BY id DESC LIMIT 1 OFFSET ?), 0)) ORDER BY id"
)
_SIGNAL_SQL = (
    f"SELECT {columns(EXCHANGE_COLS)} FROM exchanges WHERE episode_id = ? AND signal = 1"
    " AND id > ? AND id < ? ORDER BY id LIMIT ?"
)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


def one(db: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """The first row or None, with the statement run to its end: a statement left
    mid-step keeps its read snapshot open and makes COMMIT fail."""
    rows = db.execute(sql, params).fetchall()
    return rows[0] if rows else None


# -- reads ------------------------------------------------------------------------------


def peek_state(db: sqlite3.Connection, *, key: str, window: int) -> TurnState | None:
    row = one(db, _STATE_SQL, (key,))
    if row is None:
        return None
    episode = episode_row(row, "e_")
    summary = summary_row(row, "m_") if row["m_id"] is not None else None
    checkpoint = summary.checkpoint if summary else 0
    if window <= 0:  # no window: everything after the checkpoint is pending
        recent: list[Exchange] = []
        pending = signal_exchanges(db, episode_id=episode.id, after=checkpoint)
    else:  # the window, and the signal exchanges after the checkpoint before it
        params = (episode.id, checkpoint, episode.id, window - 1)
        rows = [exchange_row(r) for r in db.execute(_WINDOW_SQL, params)]
        recent, pending = rows[-window:], rows[:-window]
    return TurnState(
        session_id=int(row["session_id"]),
        key=key,
        debug=bool(row["debug"]),
        episode=episode,
        summary=summary,
        window=tuple(recent),
        pending=tuple(pending),
        last_activity=datetime.fromisoformat(row["last_activity_at"])
        if row["last_activity_at"]
        else None,
        last_reply=row["last_reply"],
        debug_users=debug_users(row["debug_users"]),
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


def signal_exchanges(
    db: sqlite3.Connection,
    *,
    episode_id: int,
    after: int,
    upto: int | None = None,
    limit: int | None = None,
) -> list[Exchange]:
    params = (episode_id, after, 2**62 if upto is None else upto, -1 if limit is None else limit)
    return [exchange_row(r) for r in db.execute(_SIGNAL_SQL, params)]


def summaries(db: sqlite3.Connection, *, episode_id: int) -> list[SummaryVersion]:
    sql = f"SELECT {columns(SUMMARY_COLS)} FROM summaries WHERE episode_id = ? ORDER BY version"
    return [summary_row(row) for row in db.execute(sql, (episode_id,))]


# -- sessions and episodes --------------------------------------------------------------


def ensure_session(db: sqlite3.Connection, *, key: str, at: datetime) -> None:
    """The session of `key` with an episode: created, or given its first episode (a
    session an old crash left without one)."""
    row = one(db, "SELECT id, current_episode_id FROM sessions WHERE key = ?", (key,))
    if row is None:
        new_session(db, key=key, at=at)
    elif row["current_episode_id"] is None:
        open_episode(db, session_id=int(row["id"]), at=at)


def new_session(db: sqlite3.Connection, *, key: str, at: datetime) -> tuple[int, int]:
    """Create the session of a key that has none, with its first episode: their ids."""
    cur = db.execute("INSERT INTO sessions (key, created_at) VALUES (?, ?)", (key, iso(at)))
    assert cur.lastrowid is not None
    return cur.lastrowid, open_episode(db, session_id=cur.lastrowid, at=at)


def open_episode(
    db: sqlite3.Connection,
    *,
    session_id: int,
    at: datetime,
    opened_by: str | None = None,
    signals: dict[str, object] | None = None,
    carry_over: Sequence[tuple[str, str]] = (),
    previous: PreviousCase | None = None,
) -> int:
    """Insert an episode and make it the session's current one: its id."""
    cur = db.execute(
        "INSERT INTO episodes (session_id, started_at, opened_by, reset_signals, carry_over,"
        " previous_case) VALUES (?, ?, ?, ?, ?, ?)",
        (
            session_id,
            iso(at),
            opened_by,
            json.dumps(signals, ensure_ascii=False, default=str) if signals else None,
            json.dumps([list(p) for p in carry_over], ensure_ascii=False) if carry_over else None,
            codec.encode(previous),
        ),
    )
    assert cur.lastrowid is not None
    db.execute(
        "UPDATE sessions SET current_episode_id = ? WHERE id = ?", (cur.lastrowid, session_id)
    )
    return cur.lastrowid


def create_and_peek(db: sqlite3.Connection, *, key: str, at: datetime, window: int) -> TurnState:
    ensure_session(db, key=key, at=at)
    state = peek_state(db, key=key, window=window)
    assert state is not None
    return state


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


def debug_users(stored: str | None) -> frozenset[str]:
    return frozenset(json.loads(stored)) if stored else frozenset()


def set_debug(db: sqlite3.Connection, *, key: str, on: bool, at: datetime, user: str) -> None:
    """Add or remove `user` from the key's debug operators; `debug` says whether any is left."""
    ensure_session(db, key=key, at=at)
    row = one(db, "SELECT debug_users FROM sessions WHERE key = ?", (key,))
    users = (
        debug_users(row["debug_users"]) | {user}
        if on
        else debug_users(row["debug_users"]) - {user}
    )
    db.execute(
        "UPDATE sessions SET debug = ?, debug_users = ? WHERE key = ?",
        (int(bool(users)), json.dumps(sorted(users)) if users else None, key),
    )
