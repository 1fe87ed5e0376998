"""`SQLiteStore`: the conversation store on SQLite through aiosqlite.

One writer connection behind an asyncio lock (every write is one short transaction that
rolls back on any exception, cancellation included) and one reader connection; WAL lets
them overlap. Every read a turn makes is served by an index and bounded by the window.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
import structlog

from .migrations import MIGRATIONS
from .sqlite_admin import EPISODE_COLS as _EPISODE_COLS
from .sqlite_admin import EXCHANGE_COLS as _EXCHANGE_COLS
from .sqlite_admin import SQLiteOperatorQueries
from .sqlite_rows import episode_row, inbox_row, summary_row
from .store import NewExchange, NewSummary
from .types import Episode, Exchange, InboxEntry, SummaryVersion, TurnState

log = structlog.get_logger(__name__)

_SUMMARY_COLS = (
    "id, episode_id, version, text, checkpoint, prompt_version, model, source_from, "
    "source_to, input_tokens, output_tokens, round, created_at"
)
_INBOX_COLS = "id, session_key, external_id, user_ref, kind, text, received_at, status, replies"


# Session, current episode, latest summary version and the newest reply of either kind
# (two index seeks on exchanges_window, not a scan), in one round trip.
_STATE_SQL = (
    "SELECT s.id, s.debug, s.last_activity_at, e.id, e.session_id, e.started_at, e.closed_at,"
    " e.close_reason, e.opened_by, e.reopened_at,"
    " (SELECT x.reply_text FROM exchanges x WHERE x.id = MAX("
    "   COALESCE((SELECT MAX(id) FROM exchanges WHERE episode_id = e.id AND signal = 0), 0),"
    "   COALESCE((SELECT MAX(id) FROM exchanges WHERE episode_id = e.id AND signal = 1), 0))),"
    f" {', '.join('m.' + c.strip() for c in _SUMMARY_COLS.split(','))}"
    " FROM sessions s JOIN episodes e ON e.id = s.current_episode_id"
    " LEFT JOIN summaries m ON m.id = (SELECT id FROM summaries WHERE episode_id = e.id"
    "   ORDER BY version DESC LIMIT 1)"
    " WHERE s.key = ?"
)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


class SQLiteStore(SQLiteOperatorQueries):
    """Open with `await SQLiteStore.open(path)`; `":memory:"` works for tests."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self._w = writer
        self._r = reader
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str | Path, *, busy_timeout_ms: int = 5000) -> SQLiteStore:
        """A file gets a writer and a reader connection (WAL lets them overlap).
        `":memory:"` gets one connection for both: a shared-cache in-memory database
        would take table locks that ignore the busy timeout."""
        target = str(path)
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(target, busy_timeout_ms)
        store = cls(writer, writer)
        await store._migrate()
        if target != ":memory:":
            store._r = await _connect(target, busy_timeout_ms)
        return store

    async def close(self) -> None:
        if self._r is not self._w:
            await self._r.close()
        await self._w.close()

    async def ping(self) -> bool:
        async with self._r.execute("SELECT 1") as cur:
            return (await cur.fetchone()) is not None

    # -- transactions ---------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE … COMMIT; ROLLBACK on any exception, `CancelledError` included."""
        async with self._lock:
            await self._w.execute("BEGIN IMMEDIATE")
            try:
                yield self._w
            except BaseException:
                await asyncio.shield(self._w.execute("ROLLBACK"))
                raise
            await asyncio.shield(self._w.execute("COMMIT"))

    async def _statement(self, sql: str, params: tuple[Any, ...]) -> aiosqlite.Cursor:
        """One statement on its own. SQLite applies a single statement entirely or not at
        all (an implicit transaction), so it needs no BEGIN/COMMIT round trips; shielded,
        so a cancelled caller never leaves it half-known to the connection. The lock keeps
        it out of another coroutine's open transaction."""
        async with self._lock:
            return await asyncio.shield(self._w.execute(sql, params))

    async def _migrate(self) -> None:
        await self._w.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        async with self._w.execute("SELECT name FROM schema_migrations") as cur:
            done = {row[0] for row in await cur.fetchall()}
        for number, (name, sql) in enumerate(MIGRATIONS, start=1):
            if name in done:
                continue
            async with self.transaction() as db:
                for statement in filter(str.strip, sql.split(";")):
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                    (number, name, iso(datetime.now(UTC))),
                )
            log.info("migration_applied", name=name)

    async def applied_migrations(self) -> list[str]:
        async with self._r.execute("SELECT name FROM schema_migrations ORDER BY version") as cur:
            return [row[0] for row in await cur.fetchall()]

    # -- intake ---------------------------------------------------------------------

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        cur = await self._statement(
            "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_key, external_id) DO NOTHING",
            (key, external_id, user, kind, text, iso(at), iso(at)),
        )
        if cur.rowcount == 0:
            return None
        entry_id = cur.lastrowid
        assert entry_id is not None
        return InboxEntry(entry_id, key, external_id, user, kind, text, at)

    async def is_debug(self, key: str) -> bool:
        """Whether `key` is in debug mode (False for an unknown key): one indexed read."""
        rows = list(
            await self._r.execute_fetchall("SELECT debug FROM sessions WHERE key = ?", (key,))
        )
        return bool(rows and rows[0][0])

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        sql = f"SELECT {_INBOX_COLS} FROM inbox WHERE session_key = ? AND external_id = ?"
        rows = list(await self._r.execute_fetchall(sql, (key, external_id)))
        return inbox_row(rows[0]) if rows else None

    async def inbox_unfinished(self) -> list[InboxEntry]:
        sql = f"SELECT {_INBOX_COLS} FROM inbox WHERE status != 'done' ORDER BY id"
        async with self._r.execute(sql) as cur:
            return [inbox_row(row) for row in await cur.fetchall()]

    async def inbox_mark(
        self, entry_id: int, status: str, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        await self._statement(*_mark_sql(entry_id, status, replies, at))

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        async with self.transaction() as db:
            cur = await db.execute(
                "DELETE FROM inbox WHERE status = 'done' AND updated_at < ?", (iso(before),)
            )
            return cur.rowcount

    # -- sessions and episodes ------------------------------------------------------

    async def _session(self, key: str, at: datetime) -> tuple[int, bool, int]:
        sql = "SELECT id, debug, current_episode_id FROM sessions WHERE key = ?"
        async with self._r.execute(sql, (key,)) as cur:
            row = await cur.fetchone()
        if row is not None:
            return int(row[0]), bool(row[1]), int(row[2])
        async with self.transaction() as db:
            await db.execute(
                "INSERT INTO sessions (key, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (key, iso(at)),
            )
            async with db.execute(sql, (key,)) as cur:
                row = await cur.fetchone()
            assert row is not None
            if row[2] is None:
                episode = await _open_episode(db, int(row[0]), None, None, at)
                return int(row[0]), bool(row[1]), episode
        return int(row[0]), bool(row[1]), int(row[2])

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state of `key`, creating the session (and first episode) when new."""
        state = await self.peek_state(key, window)
        if state is None:  # a new key (or a session without an episode): create, re-read
            await self._session(key, at)
            state = await self.peek_state(key, window)
        assert state is not None
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """Like `turn_state`, but reads only: None for an unknown key.

        Two queries: the session, episode, latest summary and last reply in one; the
        window and pending exchanges in the other (one index range scan)."""
        rows = list(await self._r.execute_fetchall(_STATE_SQL, (key,)))
        if not rows:
            return None
        row = tuple(rows[0])
        episode = episode_row(row[3:10])
        summary = summary_row(row[11:]) if row[11] is not None else None
        checkpoint = summary.checkpoint if summary else 0
        recent, pending = await self._window_and_pending(episode.id, checkpoint, window)
        last = datetime.fromisoformat(row[2]) if row[2] else None
        return TurnState(
            int(row[0]),
            key,
            bool(row[1]),
            episode,
            summary,
            tuple(recent),
            tuple(pending),
            last,
            row[10],
        )

    async def _window_and_pending(
        self, episode_id: int, checkpoint: int, window: int
    ) -> tuple[list[Exchange], list[Exchange]]:
        """The last `window` signal exchanges, and the signal exchanges after the checkpoint
        and before the window: every row with id ≥ min(checkpoint + 1, window start)."""
        if window <= 0:  # no window: everything after the checkpoint is pending
            return [], await self.signal_exchanges(episode_id, checkpoint)
        rows = await self._fetch_exchanges(
            f"SELECT {_EXCHANGE_COLS} FROM exchanges WHERE episode_id = ? AND signal = 1"
            " AND id >= MIN(? + 1, COALESCE((SELECT id FROM exchanges WHERE episode_id = ?"
            " AND signal = 1 ORDER BY id DESC LIMIT 1 OFFSET ?), 0)) ORDER BY id",
            (episode_id, checkpoint, episode_id, window - 1),
        )
        return rows[-window:], rows[:-window]

    async def set_debug(self, key: str, on: bool, at: datetime) -> None:
        await self._session(key, at)
        async with self.transaction() as db:
            await db.execute("UPDATE sessions SET debug = ? WHERE key = ?", (int(on), key))

    async def start_episode(
        self, session_id: int, opened_by: str, signals: dict[str, object] | None, at: datetime
    ) -> Episode:
        """Close the current episode (its summaries stay as its record) and open a new one."""
        async with self.transaction() as db:
            await db.execute(
                "UPDATE episodes SET closed_at = ?, close_reason = ? WHERE id ="
                " (SELECT current_episode_id FROM sessions WHERE id = ?)",
                (iso(at), opened_by, session_id),
            )
            new_id = await _open_episode(db, session_id, opened_by, signals, at)
        return Episode(new_id, session_id, at, opened_by=opened_by)

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        """Reopen the previous episode if the current one has folded nothing yet, or an
        automatic reset opened it less than `within_s` ago. Its exchanges move back."""
        async with self.transaction() as db:
            async with db.execute(
                f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? ORDER BY id DESC"
                " LIMIT 2",
                (session_id,),
            ) as cur:
                rows = [episode_row(r) for r in await cur.fetchall()]
            if len(rows) < 2:
                return None
            current, previous = rows
            async with db.execute(
                "SELECT 1 FROM summaries WHERE episode_id = ? LIMIT 1", (current.id,)
            ) as cur:
                folded = await cur.fetchone() is not None
            recent_auto = (current.opened_by or "").startswith("auto") and (
                (at - current.started_at).total_seconds() <= within_s
            )
            if folded and not recent_auto:
                return None
            await db.execute("DELETE FROM summaries WHERE episode_id = ?", (current.id,))
            await db.execute(
                "UPDATE exchanges SET episode_id = ? WHERE episode_id = ?",
                (previous.id, current.id),
            )
            await db.execute(
                "UPDATE sessions SET current_episode_id = ? WHERE id = ?",
                (previous.id, session_id),
            )
            await db.execute("DELETE FROM episodes WHERE id = ?", (current.id,))
            await db.execute(
                "UPDATE episodes SET closed_at = NULL, close_reason = NULL, reopened_at = ?"
                " WHERE id = ?",
                (iso(at), previous.id),
            )
        return Episode(
            previous.id,
            session_id,
            previous.started_at,
            opened_by=previous.opened_by,
            reopened_at=at,
        )

    # -- exchanges and summaries ------------------------------------------------------

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
        async with self.transaction() as db:
            cur = await db.execute(
                "INSERT INTO exchanges (session_id, episode_id, external_id, user_text,"
                " reply_text, signal, noise_reason, stop_reason, prompt_tokens, reply_tokens,"
                " topic, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    topic,
                    iso(new.created_at),
                ),
            )
            await db.execute(
                "UPDATE sessions SET last_activity_at = ? WHERE id = ?",
                (iso(new.created_at), new.session_id),
            )
            if new.inbox_id is not None:
                await _mark(db, new.inbox_id, "answered", new.replies, new.created_at)
            exchange_id = cur.lastrowid
        assert exchange_id is not None
        return Exchange(
            exchange_id,
            new.episode_id,
            new.user_text,
            new.reply_text,
            new.signal,
            new.noise_reason,
            new.created_at,
        )

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        """Signal exchanges with `after < id < upto`, oldest first, at most `limit`
        (served by the index)."""
        return await self._fetch_exchanges(
            f"SELECT {_EXCHANGE_COLS} FROM exchanges WHERE episode_id = ? AND signal = 1"
            " AND id > ? AND id < ? ORDER BY id LIMIT ?",
            (
                episode_id,
                after,
                upto if upto is not None else 2**62,
                -1 if limit is None else limit,
            ),
        )

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        """Write version base+1 with its checkpoint atomically, or nothing when stale:
        another fold won, the episode was reset or forgotten, or the checkpoint would
        not move forward. That makes fold-in idempotent."""
        async with self.transaction() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT COALESCE(MAX(version), 0), COALESCE(MAX(checkpoint), 0),"
                    " COALESCE(MAX(round), 0),"
                    " EXISTS (SELECT 1 FROM episodes WHERE id = ? AND closed_at IS NULL)"
                    " FROM summaries WHERE episode_id = ?",
                    (new.episode_id, new.episode_id),
                )
            )
            row = rows[0]
            latest, checkpoint, rounds = int(row[0]), int(row[1]), int(row[2])
            open_episode = bool(row[3])
            if latest != new.base_version or not open_episode or new.checkpoint < checkpoint:
                return None
            version = latest + 1
            cur = await db.execute(
                f"INSERT INTO summaries ({_SUMMARY_COLS.replace('id, ', '', 1)}, dropped_facts)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
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
                    rounds + 1,
                    iso(new.created_at),
                    json.dumps(list(new.dropped_facts), ensure_ascii=False),
                ),
            )
            summary_id = cur.lastrowid
        assert summary_id is not None
        return SummaryVersion(
            summary_id,
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
            rounds + 1,
            new.created_at,
        )

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        sql = f"SELECT {_SUMMARY_COLS} FROM summaries WHERE episode_id = ? ORDER BY version"
        async with self._r.execute(sql, (episode_id,)) as cur:
            return [summary_row(row) for row in await cur.fetchall()]


async def _connect(target: str, busy_timeout_ms: int) -> aiosqlite.Connection:
    db = await aiosqlite.connect(target, isolation_level=None)
    for pragma in (
        "PRAGMA journal_mode = WAL",
        f"PRAGMA busy_timeout = {int(busy_timeout_ms)}",
        "PRAGMA foreign_keys = ON",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA secure_delete = ON",
    ):
        await db.execute(pragma)
    return db


async def _open_episode(
    db: aiosqlite.Connection,
    session_id: int,
    opened_by: str | None,
    signals: dict[str, object] | None,
    at: datetime,
) -> int:
    cur = await db.execute(
        "INSERT INTO episodes (session_id, started_at, opened_by, reset_signals)"
        " VALUES (?, ?, ?, ?)",
        (
            session_id,
            iso(at),
            opened_by,
            json.dumps(signals, ensure_ascii=False, default=str) if signals else None,
        ),
    )
    episode_id = cur.lastrowid
    assert episode_id is not None
    await db.execute(
        "UPDATE sessions SET current_episode_id = ? WHERE id = ?", (episode_id, session_id)
    )
    return episode_id


def _mark_sql(
    entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> tuple[str, tuple[Any, ...]]:
    return (
        "UPDATE inbox SET status = ?, replies = COALESCE(?, replies), attempts = attempts + 1,"
        " updated_at = ? WHERE id = ?",
        (
            status,
            json.dumps(list(replies), ensure_ascii=False) if replies else None,
            iso(at),
            entry_id,
        ),
    )


async def _mark(
    db: aiosqlite.Connection, entry_id: int, status: str, replies: Sequence[str], at: datetime
) -> None:
    await db.execute(*_mark_sql(entry_id, status, replies, at))
