"""SQLite connections and the group-commit writer every write goes through.

One writer connection, one reader (WAL lets them overlap) and, for files, one connection
for background WAL checkpoints. A write is a plain function over a `sqlite3.Connection`;
writes queued while a batch is on the writer's thread are committed together in the
next batch (one BEGIN IMMEDIATE … COMMIT, one round trip), each rolled back alone if it
raises. Every batch runs to COMMIT or ROLLBACK on the thread, so cancelling a caller
never leaves half a transaction behind.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import aiosqlite
import structlog

log = structlog.get_logger(__name__)
T = TypeVar("T")
Sync = Literal["normal", "full"]
SYNC: dict[str, str] = {"normal": "NORMAL", "full": "FULL"}
# Writes per group commit: a burst is committed in steps, so the first callers can go on
# while the rest are written, and no transaction holds the writer for long.
_BATCH_MAX = 128
# Under load (at least `_GATHER_SIBLINGS` writes just committed or already queued) the
# next batch waits up to this many turns of the event loop, so the callers the last
# batch just answered can join it (see `_gather`).
_GATHER_TURNS = 8
_GATHER_SIBLINGS = 4
# A lazy write (a delivered entry's "done" mark) waits this long for another write to
# ride with (the next message's intake, usually) before it is committed on its own.
_MARK_DELAY_S = 0.05
# WAL checkpoints run in the background, on a connection of their own, after this many
# committed batches: otherwise the commit that finds the WAL past 1,000 pages copies it
# back itself, and the reply waiting on that commit waits milliseconds more.
_CHECKPOINT_EVERY = 64
# The writer still checkpoints past this many WAL pages (40 MB): a safety net, should the
# background checkpoints fall behind.
WAL_SAFETY_PAGES = 10_000

Write = Callable[[sqlite3.Connection], Any]


async def connect(target: str, busy_timeout_ms: int, sync: Sync) -> aiosqlite.Connection:
    """A connection in WAL mode whose rows are read by column name (`sqlite3.Row`)."""
    db = await aiosqlite.connect(target, isolation_level=None)
    db.row_factory = sqlite3.Row
    for pragma in (
        "PRAGMA journal_mode = WAL",
        f"PRAGMA busy_timeout = {int(busy_timeout_ms)}",
        "PRAGMA foreign_keys = ON",
        f"PRAGMA synchronous = {SYNC[sync]}",
        "PRAGMA secure_delete = ON",
    ):
        await db.execute(pragma)
    return db


def check_sync(sync: str, path: str | Path) -> str:
    if sync not in SYNC:
        raise ValueError(f"sync must be 'normal' or 'full', not {sync!r}")
    target = str(path)
    if target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    return target


async def _on_thread(db: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run `fn(raw connection)` on the aiosqlite connection's own worker thread, in order
    with everything else queued on it: one round trip however many statements `fn` runs.

    aiosqlite has no public hook for this; `_execute` is the single path every one of
    its public methods takes (pinned range in pyproject, covered by the store tests).
    It stays: with public calls only, each statement is a round trip of its own and a
    transaction would span awaits (a turn's four round trips would become about
    fifteen, and a cancelled caller could leave a transaction open)."""
    return cast(T, await db._execute(fn, db._conn))  # type: ignore[no-untyped-call]


class GroupCommitWriter:
    """The connections and the write queue, shared by every part of `SQLiteStore`: each
    builds its methods on `atomic` (a write, durable when it returns), `lazy` (a write
    that rides with the next one), `exclusive` (writer work outside a transaction) and
    `read`."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        # Called when a batch finds another connection committed since the last one
        # (SQLite's `data_version`): the store drops what it keeps of the database.
        self.on_foreign_commit: Callable[[], None] = lambda: None
        self._w = writer
        self._r = reader
        self._lock = asyncio.Lock()  # held while a batch (or exclusive work) is on the writer
        self._queued: list[tuple[Write, asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None
        self._flush: asyncio.TimerHandle | None = None  # commits lazily queued writes
        self._c: aiosqlite.Connection | None = None  # background checkpoints (files only)
        self._checkpointing: asyncio.Task[None] | None = None
        self._since_checkpoint = 0  # batches committed since the last checkpoint
        self.checkpoints = 0
        self._erasures = 0  # deletes whose WAL copies must go (see `wipe_soon`)
        self._wiping: asyncio.Task[None] | None = None  # retries while a reader holds on
        self._data_version: int | None = None  # SQLite's, as the last batch saw it

    @property
    def reader(self) -> aiosqlite.Connection:
        """The reader connection, for a read that is one statement."""
        return self._r

    @classmethod
    async def open(
        cls,
        target: str,
        busy_timeout_ms: int,
        sync: Sync,
        prepare: Callable[[GroupCommitWriter], Awaitable[None]],
    ) -> GroupCommitWriter:
        """A file gets a writer, a reader and a checkpoint connection (WAL lets them
        overlap), opened after `prepare` (migrations) ran on the writer alone.
        `":memory:"` gets one connection for all: a shared-cache in-memory database
        would take table locks that ignore the busy timeout."""
        writer = await connect(target, busy_timeout_ms, sync)
        db = cls(writer, writer)
        await prepare(db)
        if target != ":memory:":
            db._r = await connect(target, busy_timeout_ms, sync)
            db._c = await connect(target, busy_timeout_ms, sync)
            await writer.execute(f"PRAGMA wal_autocheckpoint = {WAL_SAFETY_PAGES}")
        return db

    async def close(self) -> None:
        """Commit what is queued, then close every connection. A cancel meanwhile (Ctrl-C
        during shutdown) does not stop it halfway: an open connection's thread would keep
        the process alive, and a batch cut short would answer after the loop is gone."""
        self._commit_soon()  # a lazily queued write is committed before closing
        committer = self._committer
        try:
            if committer is not None:
                await asyncio.wait([committer])  # unlike gather, a cancel here spares it
        finally:
            if committer is not None and not committer.done():
                await asyncio.wait([committer])
            if self._checkpointing is not None:
                await asyncio.wait([self._checkpointing])
            if self._wiping is not None:  # the last connection to close removes the WAL
                self._wiping.cancel()
                await asyncio.wait([self._wiping])
            if self._c is not None:
                await self._c.close()
            if self._r is not self._w:
                await self._r.close()
            await self._w.close()

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` on the reader's thread, all its queries in one round trip."""
        return await _on_thread(self._r, fn)

    async def exclusive(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` on the writer's thread with no batch running and no transaction open
        (a WAL checkpoint, a migration that opens its own)."""
        async with self._lock:
            return await _on_thread(self._w, fn)

    async def atomic(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` as its own atomic unit of work on the writer, durable when this returns.

        Writes that arrive while another batch is on the writer's thread are committed
        together in the next batch: one BEGIN IMMEDIATE … COMMIT and one round trip for
        up to `_BATCH_MAX` of them. One that raises is rolled back alone and gets its
        exception (`_in_batch`). A cancelled caller cannot split its write: the batch
        runs to COMMIT (or ROLLBACK) either way."""
        future: asyncio.Future[T] = self._enqueue(fn)
        return await future

    def lazy(self, fn: Write) -> asyncio.Future[None]:
        """Queue `fn` without starting a batch: it rides with the next write queued, or
        is committed on its own `_MARK_DELAY_S` later, whichever comes first; in order
        before anything queued after it, and before the store closes."""
        future: asyncio.Future[None] = self._enqueue(fn, lazy=True)
        return future

    def _enqueue(self, fn: Write, *, lazy: bool = False) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
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
                        version, results = await _on_thread(
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
                if version != self._data_version:
                    if self._data_version is not None:
                        self.on_foreign_commit()
                    self._data_version = version
                _settle(batch, results)
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
            await _on_thread(self._c, partial(_pragma, sql="PRAGMA wal_checkpoint(PASSIVE)"))
            self.checkpoints += 1
        except Exception as exc:  # the writer's safety net still bounds the WAL
            log.warning("wal_checkpoint_failed", error=repr(exc))
        finally:
            self._checkpointing = None

    # -- erasure: no byte left in the WAL -----------------------------------------------

    async def wipe_soon(self) -> None:
        """After a delete that must leave no byte behind: a TRUNCATE checkpoint that waits
        for nobody (the writer is never held up); while a reader's old snapshot prevents
        it, retries with backoff in the background until it succeeds."""
        if self._c is None:  # in memory: no file holds a copy
            return
        self._erasures += 1
        if self._wiping is None and not await self._truncate() and self._wiping is None:
            self._wiping = asyncio.create_task(self._keep_wiping(), name="sqlite-wipe")

    async def wiped(self, wait_s: float = 0.0) -> bool:
        """Whether every erased row is gone from the files too, waiting up to `wait_s`."""
        task = self._wiping
        if task is not None and wait_s > 0:
            await asyncio.wait([task], timeout=wait_s)
        return self._wiping is None

    async def _truncate(self) -> bool:
        """One non-blocking attempt; True when the WAL was emptied after every erasure."""
        assert self._c is not None
        wanted = self._erasures
        try:
            busy = await _on_thread(self._c, _truncate_wal)
        except sqlite3.Error as exc:
            log.info("wal_wipe_busy", error=repr(exc))
            return False
        return not busy and wanted == self._erasures

    async def _keep_wiping(self) -> None:
        delay, attempts = 0.05, 1
        try:
            while not await self._truncate():
                await asyncio.sleep(delay)
                delay, attempts = min(delay * 2, 2.0), attempts + 1
            log.info("wal_wiped", attempts=attempts)
        finally:
            self._wiping = None


def _truncate_wal(db: sqlite3.Connection) -> bool:
    """`wal_checkpoint(TRUNCATE)` with no busy wait; True when something was in the way
    (a reader on an old snapshot, a writer mid-commit). Passive checkpoints on this
    connection never wait either, so the timeout stays 0."""
    db.execute("PRAGMA busy_timeout = 0")
    busy, _log, _copied = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return bool(busy)


def _settle(batch: Sequence[tuple[Write, asyncio.Future[Any]]], results: list[Any]) -> None:
    for (_, future), (ok, value) in zip(batch, results, strict=True):
        if future.done():  # its caller was cancelled; the write stands
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _pragma(db: sqlite3.Connection, *, sql: str) -> list[Any]:
    return db.execute(sql).fetchall()


def _in_batch(fns: Sequence[Write], db: sqlite3.Connection) -> tuple[int, list[tuple[bool, Any]]]:
    """Run `fns` in one transaction: (True, result) each, or (False, exception) for one
    that raised, with only its own changes undone. Almost every batch succeeds whole, so
    it first runs plainly; if anything raises, that attempt is rolled back and the batch
    runs again with a savepoint per function (each reads the database afresh). With the
    results, `data_version` read inside the transaction: it moves only when another
    connection committed."""

    def run(each: Callable[[Write], tuple[bool, Any]]) -> tuple[int, list[tuple[bool, Any]]]:
        version = db.execute("PRAGMA data_version").fetchone()[0]
        return int(version), [each(fn) for fn in fns]

    try:
        return in_transaction(db, partial(run, lambda fn: (True, fn(db))))
    except Exception:
        return in_transaction(db, partial(run, lambda fn: _in_savepoint(fn, db)))


def in_transaction(db: sqlite3.Connection, body: Callable[[], T]) -> T:
    """BEGIN IMMEDIATE … COMMIT around `body`; ROLLBACK on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return result


def _in_savepoint(fn: Write, db: sqlite3.Connection) -> tuple[bool, Any]:
    db.execute("SAVEPOINT unit")
    try:
        result = (True, fn(db))
    except Exception as exc:
        db.execute("ROLLBACK TO unit")
        result = (False, exc)
    db.execute("RELEASE unit")
    return result
