"""`TurnStore` on SQLite: the intake, the key's state and the stored exchange, as plain
functions over a raw `sqlite3.Connection` and the part of `SQLiteStore` that runs them:
reads on the reader in one round trip, writes as one unit of a group commit.
`insert_exchange` is the one place an exchange is stored (its recall index and usage are
written in the same transaction); `open_episode` is the one episode insert.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial

from memory.recall.hot import Indexed
from memory.store import codec
from memory.store.sqlite import recall_index
from memory.store.sqlite.connection import GroupCommitWriter
from memory.store.sqlite.inbox import inbox_add, inbox_mark
from memory.store.sqlite.recall import SQLiteRecall
from memory.store.sqlite.rows import (
    EPISODE_COLS,
    EXCHANGE_COLS,
    SUMMARY_COLS,
    USAGE_COLS,
    columns,
    debug_users,
    episode_row,
    exchange_row,
    iso,
    one,
    summary_row,
)
from memory.store.states import IntakeStates
from memory.store.turns import Intake, NewExchange
from memory.types import Arrival, Episode, Exchange, PreviousCase, TopicDecision, TurnState

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

_EXCHANGE_INSERT = (
    "INSERT INTO exchanges (session_id, episode_id, external_id, user_text, reply_text,"
    " signal, noise_reason, stop_reason, prompt_tokens, reply_tokens, topic, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


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


def begin_turn(
    db: sqlite3.Connection, *, arrival: Arrival, window: int, read: bool = True
) -> Intake:
    """Nothing when the sender has debug on for the key (debug is per operator); else the
    inbox entry and the key's state (built without reading for a new key, whose session
    and first episode are created here; not read when `read` is false: the caller has
    it)."""
    key, at = arrival.key, arrival.received_at
    session = one(db, "SELECT debug_users, current_episode_id FROM sessions WHERE key = ?", (key,))
    if session is not None and arrival.user in debug_users(session["debug_users"]):
        return Intake(None, debug=True)
    added = inbox_add(db, arrival=arrival)
    if added is None:
        return Intake(None, debug=False)
    if session is None:  # a new chat: its first turn, and its state is known
        session_id, episode_id = new_session(db, key=key, at=at)
        # its start as a read gives it (UTC): the state may be carried to later turns
        episode = Episode(episode_id, session_id, datetime.fromisoformat(iso(at)))
        fresh = TurnState(session_id, key, False, episode, None, (), (), None, None)
        return Intake(added, debug=False, state=fresh)
    if session["current_episode_id"] is None:  # an old crash left it without an episode
        ensure_session(db, key=key, at=at)
    elif not read:
        return Intake(added, debug=False)
    return Intake(added, debug=False, state=peek_state(db, key=key, window=window))


def insert_exchange(
    db: sqlite3.Connection, *, new: NewExchange, words: Sequence[str] | None = None
) -> int:
    """Store the exchange, touch its session and mark its inbox entry answered; index it
    when it is signal (`words`: its terms, when the caller has them)."""
    cur = db.execute(
        _EXCHANGE_INSERT,
        (
            new.session_id,
            new.episode_id,
            new.external_id,
            new.user_text,
            new.reply_text,
            int(new.signal),
            new.noise_reason,
            new.stop_reason,
            new.prompt_tokens,
            new.reply_tokens,
            _topic_json(new.topic),
            iso(new.created_at),
        ),
    )
    db.execute(
        "UPDATE sessions SET last_activity_at = ? WHERE id = ?",
        (iso(new.created_at), new.session_id),
    )
    if new.inbox_id is not None:
        inbox_mark(
            db, entry_id=new.inbox_id, status="answered", replies=new.replies, at=new.created_at
        )
    assert cur.lastrowid is not None
    record_chat_usage(db, cur.lastrowid, new)
    if new.signal:  # noise is never indexed
        recall_index.index_exchange(
            db, cur.lastrowid, new.session_id, new.user_text, new.reply_text, words
        )
    return cur.lastrowid


def _topic_json(topic: TopicDecision | None) -> str | None:
    if topic is None:
        return None
    data = {"action": topic.action, "reason": topic.reason, "signals": topic.signals}
    return json.dumps(data, ensure_ascii=False, default=str)


def record_chat_usage(db: sqlite3.Connection, exchange_id: int, new: NewExchange) -> None:
    """The chat call's usage, when the provider answered (an error reports none)."""
    if new.usage is None or not new.model:
        return
    u = new.usage
    db.execute(
        f"INSERT INTO usage ({USAGE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new.session_id,
            "chat",
            new.model,
            u.input_tokens,
            u.output_tokens,
            u.cached_tokens,
            exchange_id,
            None,
            iso(new.created_at),
        ),
    )


class SQLiteTurns:
    """The turn's part of `SQLiteStore`. A turn makes two round trips, both write
    transactions: the intake (its state read inside it, kept for the turn) before the
    model call, the exchange after it; the done mark rides with the next write
    (`tests/bot/conversation/test_round_trips.py`)."""

    def __init__(self, db: GroupCommitWriter, recall: SQLiteRecall, states: IntakeStates) -> None:
        self.db = db
        self.states = states  # the state read with each intake, for the key's turn
        self.recall = recall  # a recorded signal exchange joins the key's held index

    async def begin_turn(self, arrival: Arrival, window: int) -> Intake:
        """The debug flag read, the insert and the state read are one round trip; the
        state is kept for the key's next `turn_state`. A state kept from the chat's last
        exchange (`IntakeStates.carry`) is not read again: it is the intake's, unless a
        write voided it meanwhile (then it is read on the reader)."""
        since = self.states.begin()
        carried = self.states.kept(arrival.key, window)
        intake = await self.db.atomic(
            partial(begin_turn, arrival=arrival, window=window, read=carried is None)
        )
        if intake.entry is None or intake.state is not None:
            self.states.keep(since, window, intake.state)
            return intake
        if carried is not None and self.states.kept(arrival.key, window) is carried:
            return replace(intake, state=carried)
        since = self.states.begin()
        state = await self.peek_state(arrival.key, window)
        self.states.keep(since, window, state)
        return replace(intake, state=state)

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state read with the key's intake, when nothing of the key was written
        since; else read (and the session created when new)."""
        since = self.states.begin()
        state = self.states.take(key, window)
        if state is None:
            state = await self.peek_state(key, window)
        if state is None:  # a new key (or a session without an episode): create and read
            state = await self.db.atomic(partial(create_and_peek, key=key, at=at, window=window))
        self.states.hand_out(since, window, state)
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """One round trip, two queries: the session, episode, latest summary and last
        reply in one; the window and pending exchanges in the other (one range scan)."""
        return await self.db.read(partial(peek_state, key=key, window=window))

    async def record_exchange(self, new: NewExchange) -> Exchange:
        words = recall_index.exchange_terms(new.user_text, new.reply_text) if new.signal else None
        hot, stats = self.recall.hot, self.recall.stats
        if words is not None:
            stats.writing(new.session_id)
        try:
            exchange_id = await self.db.atomic(partial(insert_exchange, new=new, words=words))
        except BaseException:  # a cancelled caller's write is committed all the same
            hot.drop(new.session_id)
            stats.drop(new.session_id, writing=words is not None)
            raise
        finally:  # the turn's state, if nothing voided it before this commit, carried
            handed = self.states.handed(new.session_id)
            self.states.void_session(new.session_id)
        exchange = Exchange(
            exchange_id,
            new.episode_id,
            new.user_text,
            new.reply_text,
            new.signal,
            new.noise_reason,
            new.created_at,
        )
        if handed is not None:  # as a read gives it: the time through its stored form
            at = datetime.fromisoformat(iso(new.created_at))
            self.states.carry(handed, replace(exchange, created_at=at))
        if words is not None:
            hot.add(new.session_id, Indexed(exchange, words))
            stats.added(new.session_id, words)
        return exchange

    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        try:
            await self.db.atomic(partial(set_debug, key=key, on=on, at=at, user=user))
        finally:
            self.states.void_key(key)
