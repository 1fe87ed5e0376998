"""`SQLiteStore`: the conversation store on SQLite through aiosqlite.

One writer connection behind an asyncio lock (every write is one short transaction that
rolls back on any exception, cancellation included) and one reader connection; WAL lets
them overlap. Every read a turn makes is served by an index and bounded by the window.

A turn makes four round trips to the connections' threads: intake, state, exchange, done.
Each runs all its statements in one go on aiosqlite's worker thread (`_on_thread`), so a
transaction is BEGIN…COMMIT inside one call, never split across awaits.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import aiosqlite
import structlog

from memory.store.protocols import Intake, NewExchange, NewSummary
from memory.store.sqlite.admin import EPISODE_COLS as _EPISODE_COLS
from memory.store.sqlite.admin import EXCHANGE_COLS as _EXCHANGE_COLS
from memory.store.sqlite.admin import SQLiteOperatorQueries
from memory.store.sqlite.migrations import MIGRATIONS
from memory.store.sqlite.rows import episode_row, exchange_row, inbox_row, summary_row
from memory.types import Episode, Exchange, InboxEntry, SummaryVersion, TurnState

log = structlog.get_logger(__name__)
T = TypeVar("T")
Sync = Literal["normal", "full"]
_SYNC: dict[str, str] = {"normal": "NORMAL", "full": "FULL"}
# Writes per group commit: a burst is committed in steps, so the first callers can go on
# while the rest are written, and no transaction holds the writer for long.
_BATCH_MAX = 128
# Under load (at least `_GATHER_SIBLINGS` writes just committed or already queued) the
# next batch waits up to this many turns of the event loop, so the callers the last
# batch just answered can join it (see `_gather`).
_GATHER_TURNS = 8
_GATHER_SIBLINGS = 4
# A delivered entry's "done" mark waits this long for another write to ride with (the
# next message's intake, usually) before it is committed on its own.
_MARK_DELAY_S = 0.05
# WAL checkpoints run in the background, on a connection of their own, after this many
# committed batches: otherwise the commit that finds the WAL past 1,000 pages copies it
# back itself, and the reply waiting on that commit waits milliseconds more.
_CHECKPOINT_EVERY = 64
# The writer still checkpoints past this many WAL pages (40 MB): a safety net, should the
# background checkpoints fall behind.
_WAL_SAFETY_PAGES = 10_000

_SUMMARY_COLS = (
    "id, episode_id, version, text, checkpoint, prompt_version, model, source_from, "
    "source_to, input_tokens, output_tokens, round, created_at"
)
_INBOX_COLS = "id, session_key, external_id, user_ref, kind, text, received_at, status, replies"


_INBOX_REJECT = (
    "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at, updated_at,"
    " status, reason) VALUES (?, ?, '', 'rejected', '', ?, ?, 'rejected', ?)"
    " ON CONFLICT (session_key, external_id) DO NOTHING"
)
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


_INBOX_INSERT = (
    "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
    " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_key, external_id) DO NOTHING"
)
# The last `window` signal exchanges and the pending ones before them: every signal row
# with id ≥ min(checkpoint + 1, window start), one range scan of exchanges_window.
_WINDOW_SQL = (
    f"SELECT {_EXCHANGE_COLS} FROM exchanges WHERE episode_id = ? AND signal = 1"
    " AND id >= MIN(? + 1, COALESCE((SELECT id FROM exchanges WHERE episode_id = ?"
    " AND signal = 1 ORDER BY id DESC LIMIT 1 OFFSET ?), 0)) ORDER BY id"
)
_SIGNAL_SQL = (
    f"SELECT {_EXCHANGE_COLS} FROM exchanges WHERE episode_id = ? AND signal = 1"
    " AND id > ? AND id < ? ORDER BY id LIMIT ?"
)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


class SQLiteStore(SQLiteOperatorQueries):
    """Open with `await SQLiteStore.open(path)`; `":memory:"` works for tests."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self._w = writer
        self._r = reader
        self._lock = asyncio.Lock()
        # Group commit: writes queued while a batch is on the writer's thread go together
        # in the next one (one transaction, one round trip; see `_in_batch`).
        self._queued: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None
        self._flush: asyncio.TimerHandle | None = None  # commits lazily queued marks
        self._c: aiosqlite.Connection | None = None  # background checkpoints (files only)
        self._checkpointing: asyncio.Task[None] | None = None
        self._since_checkpoint = 0  # batches committed since the last checkpoint
        self.checkpoints = 0

    @classmethod
    async def open(
        cls, path: str | Path, *, busy_timeout_ms: int = 5000, sync: Sync = "normal"
    ) -> SQLiteStore:
        """A file gets a writer and a reader connection (WAL lets them overlap).
        `":memory:"` gets one connection for both: a shared-cache in-memory database
        would take table locks that ignore the busy timeout.

        `sync` is SQLite's `synchronous` in WAL mode. `"normal"`: a commit survives the
        process being killed, and the last ones may roll back if the machine loses
        power (the WAL is synced at checkpoints). `"full"`: each commit (a whole group
        commit batch) also waits for the WAL to reach the disk."""
        if sync not in _SYNC:
            raise ValueError(f"sync must be 'normal' or 'full', not {sync!r}")
        target = str(path)
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(target, busy_timeout_ms, sync)
        store = cls(writer, writer)
        await store._migrate()
        if target != ":memory:":
            store._r = await _connect(target, busy_timeout_ms, sync)
            store._c = await _connect(target, busy_timeout_ms, sync)
            await writer.execute(f"PRAGMA wal_autocheckpoint = {_WAL_SAFETY_PAGES}")
        return store

    async def close(self) -> None:
        """Commit what is queued, then close both connections. A cancel meanwhile (Ctrl-C
        during shutdown) does not stop it halfway: an open connection's thread would keep
        the process alive, and a batch cut short would answer after the loop is gone."""
        self._commit_soon()  # a lazily queued mark is committed before closing
        committer = self._committer
        try:
            if committer is not None:
                await asyncio.wait([committer])  # unlike gather, a cancel here spares it
        finally:
            if committer is not None and not committer.done():
                await asyncio.wait([committer])
            if self._checkpointing is not None:
                await asyncio.wait([self._checkpointing])
            if self._c is not None:
                await self._c.close()
            if self._r is not self._w:
                await self._r.close()
            await self._w.close()

    async def synchronous(self) -> str:
        """The writer's `synchronous` setting as SQLite reports it ("normal", "full")."""
        async with self._w.execute("PRAGMA synchronous") as cur:
            row = await cur.fetchone()
        names = {0: "off", 1: "normal", 2: "full", 3: "extra"}
        return names.get(int(row[0]), str(row[0])) if row else "unknown"

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

    async def _atomic(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` as its own atomic unit of work on the writer, durable when this returns.

        Writes that arrive while another batch is on the writer's thread are committed
        together in the next batch: one BEGIN IMMEDIATE … COMMIT and one round trip for
        up to `_BATCH_MAX` of them. One that raises is rolled back alone and gets its
        exception (`_in_batch`). A cancelled caller cannot split its write: the batch
        runs to COMMIT (or ROLLBACK) either way."""
        return await self._enqueue(fn)

    def _enqueue(
        self, fn: Callable[[sqlite3.Connection], T], *, lazy: bool = False
    ) -> asyncio.Future[T]:
        """Queue `fn` for the next batch; the future resolves once it is committed.

        A `lazy` write does not start a batch: it rides with the next write queued, or
        is committed on its own `_MARK_DELAY_S` later, whichever comes first."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queued.append((fn, future))
        if not lazy:
            self._commit_soon()
        elif self._committer is None and self._flush is None:
            self._flush = loop.call_later(_MARK_DELAY_S, self._commit_soon)
        return future

    def _commit_soon(self) -> None:
        """Start committing what is queued, unless a batch is already under way (it
        takes everything queued before it ends)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._committer is None and self._queued:
            self._committer = asyncio.create_task(self._commit_queued(), name="sqlite-commit")

    async def _commit_queued(self) -> None:
        try:
            while self._queued:
                batch, self._queued = self._queued[:_BATCH_MAX], self._queued[_BATCH_MAX:]
                try:
                    async with self._lock:
                        results = await _on_thread(
                            self._w, partial(_in_batch, [fn for fn, _ in batch])
                        )
                except Exception as exc:  # BEGIN or COMMIT failed: nothing was written
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                except BaseException:  # cancelled: the batch still runs to its end
                    for _, future in batch:
                        future.cancel()
                    raise
                for (_, future), (ok, value) in zip(batch, results, strict=True):
                    if future.done():  # its caller was cancelled; the write stands
                        continue
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
                self._checkpoint_soon()
                await self._gather(len(batch))
        finally:
            self._committer = None
            if self._queued:  # cancelled with writes still waiting: they were never run
                for _, future in self._queued:
                    future.cancel()
                self._queued = []

    async def _gather(self, answered: int) -> None:
        """Under load, give the event loop up to `_GATHER_TURNS` turns before the next
        batch: the callers the last batch just answered are about to write again (a
        turn's exchange after its intake, the next message after a reply), and joining
        one batch saves each a batch of its own. Without it those writes trickle into
        small batches, each a round trip and a commit whose thread contends with the
        event loop for the interpreter lock. Load means at least `_GATHER_SIBLINGS`
        writes between the batch just committed and those already queued (PostgreSQL's
        `commit_delay` with its `commit_siblings`, counted in loop turns rather than
        microseconds). One or two chats at a time never wait."""
        if answered + len(self._queued) < _GATHER_SIBLINGS:
            return
        for _ in range(_GATHER_TURNS):
            if len(self._queued) >= _BATCH_MAX:
                return
            await asyncio.sleep(0)

    def _checkpoint_soon(self) -> None:
        """Every `_CHECKPOINT_EVERY` batches, a checkpoint in the background."""
        self._since_checkpoint += 1
        if self._c is None or self._checkpointing is not None:
            return
        if self._since_checkpoint >= _CHECKPOINT_EVERY:
            self._since_checkpoint = 0
            self._checkpointing = asyncio.create_task(self._checkpoint(), name="sqlite-wal")

    async def _checkpoint(self) -> None:
        """Copy the WAL back into the database file on the checkpoint connection's thread.
        PASSIVE: it waits for no reader or writer, and copies what no reader still needs
        (the next one goes on from there)."""
        assert self._c is not None
        try:
            await _on_thread(self._c, partial(_rows, sql="PRAGMA wal_checkpoint(PASSIVE)"))
            self.checkpoints += 1
        except Exception as exc:  # the writer's safety net still bounds the WAL
            log.warning("wal_checkpoint_failed", error=repr(exc))
        finally:
            self._checkpointing = None

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` on the reader's thread, all its queries in one round trip."""
        return await _on_thread(self._r, fn)

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
        return (await self.intake(key, external_id, user, kind, text, at)).entry

    async def intake(
        self,
        key: str,
        external_id: str,
        user: str,
        kind: str,
        text: str,
        at: datetime,
        *,
        unless_debug: bool = False,
        window: int | None = None,
    ) -> Intake:
        """`inbox_add`, but with `unless_debug` a key in debug mode stores nothing (a dry
        run writes nothing): the flag read and the insert are one round trip. A new key's
        session and first episode are created with its first message. With `window`, the
        key's turn state as of this commit comes back with a new entry (`peek_state`),
        saving the turn a round trip when nothing else of the key is in flight."""
        row = (key, external_id, user, kind, text, iso(at), iso(at))

        def run(db: sqlite3.Connection) -> Intake:
            session = _one(
                db, "SELECT debug, current_episode_id FROM sessions WHERE key = ?", (key,)
            )
            if unless_debug and session is not None and session[0]:
                return Intake(None, debug=True)
            cur = db.execute(_INBOX_INSERT, row)
            if cur.rowcount == 0 or cur.lastrowid is None:
                return Intake(None, debug=False)
            entry = InboxEntry(cur.lastrowid, key, external_id, user, kind, text, at)
            if session is None:  # a new chat: its first turn, and its state is known
                session_id, episode_id = _new_session(db, key=key, at=row[5])
                fresh = TurnState(
                    session_id,
                    key,
                    False,
                    Episode(episode_id, session_id, at),
                    None,
                    (),
                    (),
                    None,
                    None,
                )
                return Intake(entry, debug=False, state=None if window is None else fresh)
            if session[1] is None:  # a session an old crash left without an episode
                _ensure_session(db, key=key, at=row[5])
            state = None if window is None else _peek_state(db, key=key, window=window)
            return Intake(entry, debug=False, state=state)

        return await self._atomic(run)

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        """Record malformed input as rejected (never processed, never recovered); False when
        this delivery was already recorded. No session is created, no body is kept."""
        row = (key, external_id, iso(at), iso(at), reason)
        async with self.transaction() as db:
            cur = await db.execute(_INBOX_REJECT, row)
            return cur.rowcount > 0

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        sql = f"SELECT {_INBOX_COLS} FROM inbox WHERE session_key = ? AND external_id = ?"
        rows = list(await self._r.execute_fetchall(sql, (key, external_id)))
        return inbox_row(rows[0]) if rows else None

    async def inbox_unfinished(self) -> list[InboxEntry]:
        sql = f"SELECT {_INBOX_COLS} FROM inbox WHERE status != 'done' AND status != 'rejected'"
        sql += " ORDER BY id"  # the partial index inbox_unfinished covers the first term
        async with self._r.execute(sql) as cur:
            return [inbox_row(row) for row in await cur.fetchall()]

    async def inbox_mark(
        self, entry_id: int, status: str, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        sql, params = _mark_sql(entry_id, status, replies, at)
        await self._atomic(partial(_execute, sql=sql, params=params))

    def inbox_done_soon(self, entry_id: int, at: datetime) -> asyncio.Future[None]:
        """Mark a delivered entry done without waiting: it rides with the next write
        queued (usually the next message's intake), or is committed on its own within
        `_MARK_DELAY_S`; in order before anything queued after it, and before the store
        closes. A crash before that commit redelivers an already delivered reply, as a
        crash between sending and marking always could. The future resolves when the
        mark is committed (or failed, which is logged)."""
        sql, params = _mark_sql(entry_id, "done", (), at)
        future = self._enqueue(partial(_execute, sql=sql, params=params), lazy=True)
        future.add_done_callback(_log_failed_mark)
        return future

    async def inbox_prune(self, before: datetime) -> int:
        """Drop finished entries older than `before` (dedupe must outlive redeliveries)."""
        async with self.transaction() as db:
            cur = await db.execute(
                "DELETE FROM inbox WHERE status IN ('done', 'rejected') AND updated_at < ?",
                (iso(before),),
            )
            return cur.rowcount

    # -- sessions and episodes ------------------------------------------------------

    async def _session(self, key: str, at: datetime) -> None:
        """Create the session of `key` with its first episode, unless it exists (one
        round trip; a session without an episode, from an old crash, gets one)."""
        await self._atomic(partial(_ensure_session, key=key, at=iso(at)))

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state of `key`, creating the session (and first episode) when new."""
        state = await self.peek_state(key, window)
        if state is None:  # a new key (or a session without an episode): create and read
            state = await self._atomic(
                partial(_create_and_peek, key=key, at=iso(at), window=window)
            )
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """Like `turn_state`, but reads only: None for an unknown key.

        One round trip, two queries: the session, episode, latest summary and last reply
        in one; the window and pending exchanges in the other (one index range scan)."""
        return await self._read(partial(_peek_state, key=key, window=window))

    async def peek_for_fold(
        self, key: str, window: int, opening: int, *, due: int = 1
    ) -> tuple[TurnState, list[Exchange]] | None:
        """`peek_state` and the first `opening` signal exchanges of the current episode
        (the facts a fold pins), in one round trip; None for an unknown key. With fewer
        than `due` pending exchanges there is nothing to fold yet and the opening is not
        read (it comes back empty)."""

        def run(db: sqlite3.Connection) -> tuple[TurnState, list[Exchange]] | None:
            state = _peek_state(db, key=key, window=window)
            if state is None:
                return None
            if len(state.pending) < max(due, 1):
                return state, []
            first = _signal_exchanges(db, episode_id=state.episode.id, after=0, limit=opening)
            return state, first

        return await self._read(run)

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
        exchange_id = await self._atomic(partial(_record_exchange, new=new, topic=topic))
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
        return await self._read(
            partial(_signal_exchanges, episode_id=episode_id, after=after, upto=upto, limit=limit)
        )

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        """Write version base+1 with its checkpoint atomically, or nothing when stale:
        another fold won, the episode was reset or forgotten, or the checkpoint would
        not move forward. That makes fold-in idempotent."""
        written = await self._atomic(partial(_write_summary, new=new))
        if written is None:
            return None
        summary_id, version, rounds = written
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
            rounds,
            new.created_at,
        )

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        sql = f"SELECT {_SUMMARY_COLS} FROM summaries WHERE episode_id = ? ORDER BY version"
        async with self._r.execute(sql, (episode_id,)) as cur:
            return [summary_row(row) for row in await cur.fetchall()]


async def _on_thread(db: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run `fn(raw connection)` on the aiosqlite connection's own worker thread, in order
    with everything else queued on it: one round trip however many statements `fn` runs.
    aiosqlite has no public hook for this; `_execute` is the single path every one of its
    public methods takes (pinned range in pyproject, covered by the store contract tests)."""
    return cast(T, await db._execute(fn, db._conn))  # type: ignore[no-untyped-call]


def _one(db: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """The first row or None, with the statement run to its end: a statement left
    mid-step keeps its read snapshot open and makes COMMIT fail."""
    rows = db.execute(sql, params).fetchall()
    return rows[0] if rows else None


def _rows(db: sqlite3.Connection, *, sql: str) -> list[Any]:
    return db.execute(sql).fetchall()


def _log_failed_mark(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("inbox_mark_failed", error=repr(future.exception()))


def _in_batch(
    fns: Sequence[Callable[[sqlite3.Connection], Any]], db: sqlite3.Connection
) -> list[tuple[bool, Any]]:
    """Run `fns` in one transaction: (True, result) each, or (False, exception) for one
    that raised, with only its own changes undone. Almost every batch succeeds whole, so
    it first runs plainly; if anything raises, that attempt is rolled back and the batch
    runs again with a savepoint per function (each reads the database afresh)."""
    try:
        return _transaction(db, lambda: [(True, fn(db)) for fn in fns])
    except Exception:
        return _transaction(db, lambda: [_in_savepoint(fn, db) for fn in fns])


def _transaction(db: sqlite3.Connection, body: Callable[[], T]) -> T:
    db.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return result


def _in_savepoint(
    fn: Callable[[sqlite3.Connection], Any], db: sqlite3.Connection
) -> tuple[bool, Any]:
    db.execute("SAVEPOINT unit")
    try:
        result = (True, fn(db))
    except Exception as exc:
        db.execute("ROLLBACK TO unit")
        result = (False, exc)
    db.execute("RELEASE unit")
    return result


def _execute(db: sqlite3.Connection, *, sql: str, params: tuple[Any, ...]) -> None:
    db.execute(sql, params)


def _peek_state(db: sqlite3.Connection, *, key: str, window: int) -> TurnState | None:
    row = _one(db, _STATE_SQL, (key,))
    if row is None:
        return None
    episode = episode_row(row[3:10])
    summary = summary_row(row[11:]) if row[11] is not None else None
    checkpoint = summary.checkpoint if summary else 0
    if window <= 0:  # no window: everything after the checkpoint is pending
        recent: list[Exchange] = []
        pending = _signal_exchanges(db, episode_id=episode.id, after=checkpoint)
    else:  # the window, and the signal exchanges after the checkpoint before it
        rows = [
            exchange_row(r)
            for r in db.execute(_WINDOW_SQL, (episode.id, checkpoint, episode.id, window - 1))
        ]
        recent, pending = rows[-window:], rows[:-window]
    return TurnState(
        int(row[0]),
        key,
        bool(row[1]),
        episode,
        summary,
        tuple(recent),
        tuple(pending),
        datetime.fromisoformat(row[2]) if row[2] else None,
        row[10],
    )


def _ensure_session(db: sqlite3.Connection, *, key: str, at: str) -> None:
    """The session of `key` with an episode: created, or given its first episode."""
    row = _one(db, "SELECT id, current_episode_id FROM sessions WHERE key = ?", (key,))
    if row is None:
        _new_session(db, key=key, at=at)
    elif row[1] is None:
        _first_episode(db, session_id=int(row[0]), at=at)


def _new_session(db: sqlite3.Connection, *, key: str, at: str) -> tuple[int, int]:
    """Create the session of a key that has none, with its first episode: their ids."""
    cur = db.execute("INSERT INTO sessions (key, created_at) VALUES (?, ?)", (key, at))
    assert cur.lastrowid is not None
    return cur.lastrowid, _first_episode(db, session_id=cur.lastrowid, at=at)


def _first_episode(db: sqlite3.Connection, *, session_id: int, at: str) -> int:
    cur = db.execute(
        "INSERT INTO episodes (session_id, started_at) VALUES (?, ?)", (session_id, at)
    )
    db.execute(
        "UPDATE sessions SET current_episode_id = ? WHERE id = ?", (cur.lastrowid, session_id)
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def _create_and_peek(db: sqlite3.Connection, *, key: str, at: str, window: int) -> TurnState:
    _ensure_session(db, key=key, at=at)
    state = _peek_state(db, key=key, window=window)
    assert state is not None
    return state


def _signal_exchanges(
    db: sqlite3.Connection,
    *,
    episode_id: int,
    after: int,
    upto: int | None = None,
    limit: int | None = None,
) -> list[Exchange]:
    params = (episode_id, after, 2**62 if upto is None else upto, -1 if limit is None else limit)
    return [exchange_row(r) for r in db.execute(_SIGNAL_SQL, params)]


def _record_exchange(db: sqlite3.Connection, *, new: NewExchange, topic: str | None) -> int:
    cur = db.execute(
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
    db.execute(
        "UPDATE sessions SET last_activity_at = ? WHERE id = ?",
        (iso(new.created_at), new.session_id),
    )
    if new.inbox_id is not None:
        db.execute(*_mark_sql(new.inbox_id, "answered", new.replies, new.created_at))
    assert cur.lastrowid is not None
    return cur.lastrowid


def _write_summary(db: sqlite3.Connection, *, new: NewSummary) -> tuple[int, int, int] | None:
    """(id, version, round) of the version written on top of `new.base_version`, or None
    when stale: another fold won, the episode closed or is gone, or the checkpoint would
    move back."""
    latest, checkpoint, rounds, open_episode = _one(
        db,
        "SELECT COALESCE(MAX(version), 0), COALESCE(MAX(checkpoint), 0),"
        " COALESCE(MAX(round), 0),"
        " EXISTS (SELECT 1 FROM episodes WHERE id = ? AND closed_at IS NULL)"
        " FROM summaries WHERE episode_id = ?",
        (new.episode_id, new.episode_id),
    ) or (0, 0, 0, False)
    if latest != new.base_version or not open_episode or new.checkpoint < checkpoint:
        return None
    version = int(latest) + 1
    cur = db.execute(
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
            int(rounds) + 1,
            iso(new.created_at),
            json.dumps(list(new.dropped_facts), ensure_ascii=False),
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid, version, int(rounds) + 1


async def _connect(target: str, busy_timeout_ms: int, sync: Sync) -> aiosqlite.Connection:
    db = await aiosqlite.connect(target, isolation_level=None)
    for pragma in (
        "PRAGMA journal_mode = WAL",
        f"PRAGMA busy_timeout = {int(busy_timeout_ms)}",
        "PRAGMA foreign_keys = ON",
        f"PRAGMA synchronous = {_SYNC[sync]}",
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
