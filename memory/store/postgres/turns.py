"""`TurnStore` on PostgreSQL: the intake with the state read after it, the key's state,
the stored exchange; the turn's reads as functions over one connection (run alone or
inside a transaction) and the part of `PostgresStore` that runs them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory.store import codec
from memory.store.postgres import sql
from memory.store.postgres.connection import Conn, PostgresDatabase
from memory.store.postgres.inbox import intake_of, intake_params
from memory.store.postgres.locks import Stamped
from memory.store.postgres.recall import indexed
from memory.store.postgres.rows import (
    Row,
    episode_row,
    exchange_of_json,
    exchange_row,
    summary_row,
)
from memory.store.states import IntakeStates
from memory.store.turns import Intake, NewExchange
from memory.types import Arrival, Exchange, PreviousCase, TurnState

STAMPS_KEPT = 10_000  # intake stamps awaiting their claim; past it the oldest go (bounded)


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
    row = await cur.fetchone()
    if row is None:
        return None, None
    found = [exchange_of_json(x) for x in row["exchanges"] or ()]
    return _state(row, key, found[-window:], found[:-window]), row["s_stamp"]


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


def _usage_params(new: NewExchange) -> dict[str, object]:
    """The chat call's usage, when the provider answered (an error reports none)."""
    u = new.usage
    reported = u is not None and bool(new.model)
    return {
        "usage_model": new.model if reported else None,
        "input_tokens": u.input_tokens if u else 0,
        "output_tokens": u.output_tokens if u else 0,
        "cached_tokens": u.cached_tokens if u else 0,
    }


class PostgresTurns:
    """The turn's part of `PostgresStore`. `stamps`: entry id → the state read with its
    intake and its stamp, for the entry's claim (`locks.PostgresClaims`): only a claim
    that finds the chat unchanged (no other worker wrote it) hands the state on to the
    turn (`states`)."""

    def __init__(self, db: PostgresDatabase, states: IntakeStates) -> None:
        self.db = db
        self.states = states  # the states confirmed by a claim, for the key's turn
        self.stamps: dict[int, Stamped] = {}

    async def begin_turn(self, arrival: Arrival, window: int) -> Intake:
        """The intake (`sql.INTAKE`) and the state read after it, pipelined: one round
        trip. The state's stamp is kept for the claim, which says whether it still holds."""
        since = self.states.begin()
        async with self.db.connection() as conn:
            async with conn.pipeline():
                cur = await conn.execute(sql.INTAKE, intake_params(arrival, unless_debug=True))
                state, stamp = await peek_stamped(conn, arrival.key, window)
            row = await cur.fetchone()
        assert row is not None
        intake = intake_of(row, arrival, unless_debug=True)
        if intake.entry is None:
            return intake
        if stamp is not None and state is not None:
            if len(self.stamps) >= STAMPS_KEPT:
                del self.stamps[next(iter(self.stamps))]
            self.stamps[intake.entry.id] = Stamped(stamp, since, window, state)
        return replace(intake, state=state)

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state read with the key's intake, when nothing of the key was written
        since (here, or by another worker before its claim); else read, creating the
        session (and first episode) when new."""
        state = self.states.take(key, window)
        if state is None:
            state = await self.peek_state(key, window)
        if state is None:
            async with self.db.transaction() as conn:
                state = await create_and_peek(conn, key, at, window)
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        async with self.db.connection() as conn:
            return await peek_state(conn, key, window)

    async def record_exchange(self, new: NewExchange) -> Exchange:
        """Store the exchange and mark its inbox entry answered, in one transaction."""
        topic = None
        if new.topic is not None:
            topic = json.dumps(
                {
                    "action": new.topic.action,
                    "reason": new.topic.reason,
                    "signals": new.topic.signals,
                },
                ensure_ascii=False,
                default=str,
            )
        replies = json.dumps(list(new.replies), ensure_ascii=False) if new.replies else None
        params = {
            "session": new.session_id, "episode": new.episode_id,
            "external_id": new.external_id, "user_text": new.user_text,
            "reply_text": new.reply_text, "signal": new.signal,
            "noise_reason": new.noise_reason, "stop_reason": new.stop_reason,
            "prompt_tokens": new.prompt_tokens, "reply_tokens": new.reply_tokens,
            "topic": topic, "at": new.created_at, "replies": replies, "inbox": new.inbox_id,
            **_usage_params(new),
            "recall": indexed(new),
        }  # fmt: skip
        try:
            (row,) = await self.db.all(sql.RECORD_EXCHANGE, params)
        finally:
            self.states.void_session(new.session_id)
        return Exchange(
            int(row["id"]), new.episode_id, new.user_text, new.reply_text, new.signal,
            new.noise_reason, new.created_at,
        )  # fmt: skip

    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        """Add or remove `user` from the key's debug operators (debug is per operator)."""
        try:
            async with self.db.transaction() as conn:
                await ensure_session(conn, key, at)
                await conn.execute(
                    sql.DEBUG_ON if on else sql.DEBUG_OFF, {"user": user, "key": key}
                )
        finally:
            self.states.void_key(key)
