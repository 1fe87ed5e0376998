"""The turn path's reads and episode steps, as functions over one connection: the store
runs them alone or inside its transactions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from memory.soft_reset import codec
from memory.store.postgres import sql
from memory.store.postgres.rows import Row, episode_row, exchange_row, summary_row
from memory.types import Episode, Exchange, PreviousCase, TurnState

Conn = psycopg.AsyncConnection[Any]


async def peek_state(conn: Conn, key: str, window: int) -> TurnState | None:
    """Session, episode, latest summary, last reply, window and pending: one statement
    (with no window, a second reads everything after the checkpoint)."""
    state, _ = await peek_stamped(conn, key, window)
    return state


async def peek_stamped(conn: Conn, key: str, window: int) -> tuple[TurnState | None, str | None]:
    """`peek_state` and the state's stamp (`sql.STAMP`), read in the same statement."""
    if window <= 0:
        cur = await conn.execute(sql.STATE, {"key": key})
        row = await cur.fetchone()
        if row is None:
            return None, None
        pending = await signal_exchanges(conn, row["e_id"], row["m_checkpoint"] or 0)
        return _state(row, key, [], pending), row["s_stamp"]
    cur = await conn.execute(sql.STATE_AND_WINDOW, {"key": key, "offset": window - 1})
    rows = await cur.fetchall()
    if not rows:
        return None, None
    found = [exchange_row(r, "x_") for r in rows if r["x_id"] is not None]
    return _state(rows[0], key, found[-window:], found[:-window]), rows[0]["s_stamp"]


def _state(row: Row, key: str, recent: list[Exchange], pending: list[Exchange]) -> TurnState:
    summary = summary_row(row, "m_") if row["m_id"] is not None else None
    return TurnState(
        int(row["s_id"]),
        key,
        bool(row["s_debug"]),
        episode_row(row, "e_"),
        summary,
        tuple(recent),
        tuple(pending),
        row["s_last_activity_at"],
        row["last_reply"],
        debug_users=frozenset(row["s_debug_users"] or ()),
    )


async def signal_exchanges(
    conn: Conn, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
) -> list[Exchange]:
    """Signal exchanges with `after < id < upto`, oldest first, at most `limit`."""
    params = {"ep": episode_id, "after": after, "upto": upto, "limit": limit}
    cur = await conn.execute(sql.SIGNAL, params)
    return [exchange_row(r) for r in await cur.fetchall()]


async def ensure_session(conn: Conn, key: str, at: datetime) -> int:
    """The session id of `key`, created with its first episode when new. Two workers
    meeting a new key at once create it once (`ON CONFLICT DO NOTHING`)."""
    cur = await conn.execute(sql.SESSION_INSERT, (key, at))
    created = await cur.fetchone()
    if created is not None:
        session_id = int(created["id"])
        await open_episode(conn, session_id, None, None, at)
        return session_id
    cur = await conn.execute(sql.SESSION_OF_KEY, (key,))
    row = await cur.fetchone()
    assert row is not None
    if row["current_episode_id"] is None:  # parity with SQLite's crash leftovers
        await open_episode(conn, int(row["id"]), None, None, at)
    return int(row["id"])


async def open_episode(
    conn: Conn,
    session_id: int,
    opened_by: str | None,
    signals: dict[str, object] | None,
    at: datetime,
    carry_over: Sequence[tuple[str, str]] = (),
    previous: PreviousCase | None = None,
) -> int:
    encoded = json.dumps(signals, ensure_ascii=False, default=str) if signals else None
    carried = json.dumps([list(p) for p in carry_over], ensure_ascii=False) if carry_over else None
    values = (session_id, at, opened_by, encoded, carried, codec.encode(previous))
    cur = await conn.execute(sql.EPISODE_INSERT, values)
    row = await cur.fetchone()
    assert row is not None
    await conn.execute(sql.SESSION_CURRENT, (row["id"], session_id))
    return int(row["id"])


async def create_and_peek(conn: Conn, key: str, at: datetime, window: int) -> TurnState:
    await ensure_session(conn, key, at)
    state = await peek_state(conn, key, window)
    assert state is not None
    return state


async def undo_reset(conn: Conn, session_id: int, at: datetime, within_s: float) -> Episode | None:
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
