"""The writes of a turn, as plain functions over a raw `sqlite3.Connection`, each run as
one unit of a group commit: the intake, the exchange, the summary version, the inbox
marks. `insert_exchange` is the one place an exchange is stored (a search index written
in the same transaction goes there)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory.store.conversation import Intake, NewExchange, NewSummary
from memory.store.sqlite import recall_index
from memory.store.sqlite.queries import (
    debug_users,
    ensure_session,
    iso,
    new_session,
    one,
    peek_state,
)
from memory.store.sqlite.rows import SUMMARY_COLS
from memory.store.sqlite.usage import record_chat_usage, record_fold_usage
from memory.types import Episode, InboxEntry, SummaryVersion, TopicDecision, TurnState

_INBOX_INSERT = (
    "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
    " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_key, external_id) DO NOTHING"
)
_EXCHANGE_INSERT = (
    "INSERT INTO exchanges (session_id, episode_id, external_id, user_text, reply_text,"
    " signal, noise_reason, stop_reason, prompt_tokens, reply_tokens, topic, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SUMMARY_INSERT = (
    f"INSERT INTO summaries ({', '.join(SUMMARY_COLS[1:])}, dropped_facts)"
    f" VALUES ({', '.join('?' * len(SUMMARY_COLS))})"
)


def inbox_add(db: sqlite3.Connection, *, entry: InboxEntry) -> InboxEntry | None:
    """The entry with its new id, or None when its external id is already in."""
    at = iso(entry.received_at)
    row = (entry.key, entry.external_id, entry.user, entry.kind, entry.text, at, at)
    cur = db.execute(_INBOX_INSERT, row)
    if cur.rowcount == 0 or cur.lastrowid is None:
        return None
    return InboxEntry(
        cur.lastrowid,
        entry.key,
        entry.external_id,
        entry.user,
        entry.kind,
        entry.text,
        entry.received_at,
    )


def begin_turn(db: sqlite3.Connection, *, entry: InboxEntry, window: int) -> Intake:
    """Nothing when the sender has debug on for the key (debug is per operator); else the
    inbox entry and the key's state (built without reading for a new key, whose session
    and first episode are created here)."""
    key, at = entry.key, entry.received_at
    session = one(db, "SELECT debug_users, current_episode_id FROM sessions WHERE key = ?", (key,))
    if session is not None and entry.user in debug_users(session["debug_users"]):
        return Intake(None, debug=True)
    added = inbox_add(db, entry=entry)
    if added is None:
        return Intake(None, debug=False)
    if session is None:  # a new chat: its first turn, and its state is known
        session_id, episode_id = new_session(db, key=key, at=at)
        episode = Episode(episode_id, session_id, at)
        fresh = TurnState(session_id, key, False, episode, None, (), (), None, None)
        return Intake(added, debug=False, state=fresh)
    if session["current_episode_id"] is None:  # an old crash left it without an episode
        ensure_session(db, key=key, at=at)
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


def inbox_mark(
    db: sqlite3.Connection, *, entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> None:
    db.execute(
        "UPDATE inbox SET status = ?, replies = COALESCE(?, replies), attempts = attempts + 1,"
        " updated_at = ? WHERE id = ?",
        (
            status,
            json.dumps(list(replies), ensure_ascii=False) if replies else None,
            iso(at),
            entry_id,
        ),
    )


def inbox_prune(db: sqlite3.Connection, *, before: datetime) -> int:
    cur = db.execute(
        "DELETE FROM inbox WHERE status IN ('done', 'rejected') AND updated_at < ?",
        (iso(before),),
    )
    return cur.rowcount


def inbox_reject(
    db: sqlite3.Connection, *, key: str, external_id: str, reason: str, at: datetime
) -> bool:
    cur = db.execute(
        "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
        " updated_at, status, reason) VALUES (?, ?, '', 'rejected', '', ?, ?, 'rejected', ?)"
        " ON CONFLICT (session_key, external_id) DO NOTHING",
        (key, external_id, iso(at), iso(at), reason),
    )
    return cur.rowcount > 0


def forget(db: sqlite3.Connection, *, key: str) -> int:
    removed = db.execute("DELETE FROM inbox WHERE session_key = ?", (key,)).rowcount
    recall_index.forget_key(db, key)
    return removed + db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount
