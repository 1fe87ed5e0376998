"""`SQLiteStore`: conversation memory and the delivery inbox on SQLite, through aiosqlite.

Every write is one unit of the group-commit writer (`connection`), committed with the
writes queued beside it and rolled back alone if it fails, cancellation included; reads
run on the reader connection, all of one method's statements in one round trip, each
served by an index and bounded by the window. A turn makes four round trips: intake,
state, exchange, done (the done mark rides with the next write).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path

import aiosqlite
import structlog

from memory.recall.hot import HotKeys, Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import Hit
from memory.store.conversation import Intake, NewEpisode, NewExchange, NewSummary, SessionInfo
from memory.store.inbox import Answered, Claim, DoneMarks
from memory.store.sqlite import admin, queries, recall_index, usage, writes
from memory.store.sqlite.connection import (
    WAL_SAFETY_PAGES,
    GroupCommitWriter,
    Sync,
    check_sync,
    connect,
)
from memory.store.sqlite.rows import INBOX_COLS, columns, inbox_row
from memory.store.sqlite.schema import migrate
from memory.store.usage import UsageTotal
from memory.types import Episode, Exchange, InboxEntry, SummaryVersion, TurnState

log = structlog.get_logger(__name__)
_INBOX_SELECT = f"SELECT {columns(INBOX_COLS)} FROM inbox"
HOLDING_AT_ONCE = 2  # keys read into memory at a time (`_hold_soon`)


class SQLiteStore(GroupCommitWriter):
    """Implements `ConversationStore`, `DeliveryInbox` and `UsageQueries`. Open with
    `await SQLiteStore.open(path)`; `":memory:"` works for tests."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        super().__init__(writer, reader)
        self._delivering = DoneMarks()  # done marks not committed yet
        self.hot = HotKeys()  # recently searched keys' recall index, kept exact here
        self._holding: dict[int, asyncio.Task[None]] = {}  # keys being read into `hot`

    async def close(self) -> None:
        """Stop reading keys into memory, then commit what is queued and close."""
        holding = list(self._holding.values())
        for task in holding:
            task.cancel()
        if holding:
            await asyncio.wait(holding)
        await super().close()

    def _foreign_commit(self) -> None:
        """Another connection wrote (a CLI next to the bot): what is held may be stale."""
        self.hot.clear()

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
        target = check_sync(sync, path)
        writer = await connect(target, busy_timeout_ms, sync)
        store = cls(writer, writer)
        for name in await store._exclusive(migrate):
            log.info("migration_applied", name=name)
        await store._exclusive(recall_index.build_if_needed)
        if target != ":memory:":
            store._r = await connect(target, busy_timeout_ms, sync)
            store._c = await connect(target, busy_timeout_ms, sync)
            await writer.execute(f"PRAGMA wal_autocheckpoint = {WAL_SAFETY_PAGES}")
        return store

    async def ping(self) -> bool:
        async with self._r.execute("SELECT 1") as cur:
            return (await cur.fetchone()) is not None

    async def synchronous(self) -> str:
        return await self._exclusive(admin.synchronous)

    async def applied_migrations(self) -> list[str]:
        return await self._read(admin.applied_migrations)

    # -- the delivery inbox ---------------------------------------------------------------

    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None:
        entry = InboxEntry(0, key, external_id, user, kind, text, at)
        return await self._atomic(partial(writes.inbox_add, entry=entry))

    async def inbox_reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        reject = partial(
            writes.inbox_reject, key=key, external_id=external_id, reason=reason, at=at
        )
        return await self._atomic(reject)

    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None:
        sql = f"{_INBOX_SELECT} WHERE session_key = ? AND external_id = ?"
        rows = list(await self._r.execute_fetchall(sql, (key, external_id)))
        if not rows:
            return None
        entry = inbox_row(rows[0])
        return replace(entry, status="done") if entry.id in self._delivering else entry

    async def inbox_unfinished(self) -> list[InboxEntry]:
        # the partial index inbox_unfinished covers the first term
        sql = f"{_INBOX_SELECT} WHERE status != 'done' AND status != 'rejected' ORDER BY id"
        rows = await self._r.execute_fetchall(sql)
        return [e for e in map(inbox_row, rows) if e.id not in self._delivering]

    async def inbox_mark(
        self, entry_id: int, status: Answered, replies: Sequence[str] = (), *, at: datetime
    ) -> None:
        mark = partial(writes.inbox_mark, entry_id=entry_id, status=status, replies=replies, at=at)
        await self._atomic(mark)

    def inbox_delivered(self, entry_id: int, at: datetime) -> None:
        """The done mark rides with the next write queued (usually the next message's
        intake) or is committed on its own shortly after; meanwhile this store already
        reads the entry as done, so a redelivery is not answered twice."""
        mark = partial(writes.inbox_mark, entry_id=entry_id, status="done", replies=(), at=at)
        self._delivering.track(entry_id, self._lazy(mark))

    async def inbox_settled(self) -> None:
        await self._delivering.settled()

    @asynccontextmanager
    async def claim_turn(self, entry: InboxEntry) -> AsyncIterator[Claim]:
        """One process owns a SQLite file: the chat queue already orders the chat."""
        yield Claim((entry,), exclusive=True)

    async def inbox_prune(self, before: datetime) -> int:
        return await self._atomic(partial(writes.inbox_prune, before=before))

    # -- the turn ---------------------------------------------------------------------------

    async def begin_turn(self, draft: InboxEntry, window: int) -> Intake:
        """The debug flag read, the insert and the state read are one round trip."""
        return await self._atomic(partial(writes.begin_turn, entry=draft, window=window))

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        state = await self.peek_state(key, window)
        if state is None:  # a new key (or a session without an episode): create and read
            create = partial(queries.create_and_peek, key=key, at=at, window=window)
            state = await self._atomic(create)
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """One round trip, two queries: the session, episode, latest summary and last
        reply in one; the window and pending exchanges in the other (one range scan)."""
        return await self._read(partial(queries.peek_state, key=key, window=window))

    async def peek_for_fold(
        self, key: str, window: int, opening: int
    ) -> tuple[TurnState, list[Exchange]] | None:
        peek = partial(queries.peek_for_fold, key=key, window=window, opening=opening)
        return await self._read(peek)

    async def record_exchange(self, new: NewExchange) -> Exchange:
        words = recall_index.exchange_terms(new.user_text, new.reply_text) if new.signal else None
        try:
            exchange_id = await self._atomic(partial(writes.insert_exchange, new=new, words=words))
        except BaseException:  # a cancelled caller's write is committed all the same
            self.hot.drop(new.session_id)
            raise
        exchange = Exchange(
            exchange_id,
            new.episode_id,
            new.user_text,
            new.reply_text,
            new.signal,
            new.noise_reason,
            new.created_at,
        )
        if words is not None:
            self.hot.add(new.session_id, Indexed(exchange, words))
        return exchange

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        read = partial(
            queries.signal_exchanges, episode_id=episode_id, after=after, upto=upto, limit=limit
        )
        return await self._read(read)

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        return await self._atomic(partial(writes.write_summary, new=new))

    async def recall(self, query: RecallQuery) -> list[Hit]:
        """From memory when the key was searched lately (`memory.recall.hot`); else on
        disk (FTS5), while the key's index is read into memory in the background."""
        if not query.terms or query.limit <= 0:
            return []
        if query.previous is not None:  # memory holds the current episode only
            return await self._read(partial(recall_index.search, query=query))
        hits = self.hot.search(query)
        if hits is not None:
            return hits
        self._hold_soon(query.session_id, query.episode_id)
        return await self._read(partial(recall_index.search, query=query))

    def _hold_soon(self, session_id: int, episode_id: int) -> None:
        """Start reading the key into memory, unless `HOLDING_AT_ONCE` reads are under
        way: after a restart every busy chat's first search misses, and a queue of reads
        on the reader's thread would hold up the turns' own reads behind it. A key not
        read now is read at one of its next searches."""
        if (
            self.hot.too_big(session_id)
            or session_id in self._holding
            or len(self._holding) >= HOLDING_AT_ONCE
        ):
            return
        task = asyncio.create_task(self._hold(session_id, episode_id), name="recall-hold")
        self._holding[session_id] = task

    async def _hold(self, session_id: int, episode_id: int) -> None:
        """Read a key's index into memory, `LOAD_BATCH` exchanges a round trip (other
        reads go between them), stopping early if it turns out too large to hold."""
        load = self.hot.begin_load(session_id)
        index = KeyIndex(session_id, episode_id)
        try:
            after: int | None = 0
            while after is not None and not load.stale and not self.hot.too_large(index):
                read = partial(
                    recall_index.load_key, index=index, after=after, limit=recall_index.LOAD_BATCH
                )
                after = await self._read(read)
            if after is None:
                self.hot.keep(load, index)
        except Exception as exc:  # the on-disk search goes on serving the key
            log.warning("recall_hold_failed", error=repr(exc))
        finally:
            self.hot.abandon(load)
            del self._holding[session_id]

    async def recall_held(self) -> None:
        """Wait for the keys being read into memory (tests, benches)."""
        while self._holding:
            await asyncio.wait(list(self._holding.values()))

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        return await self._read(partial(recall_index.size, key=key))

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        return await self._read(partial(queries.summaries, episode_id=episode_id))

    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        await self._atomic(partial(queries.set_debug, key=key, on=on, at=at, user=user))

    # -- episodes and erasure ---------------------------------------------------------------

    async def start_episode(self, new: NewEpisode) -> Episode:
        return await self._atomic(partial(queries.start_episode, new=new))

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        undo = partial(queries.undo_reset, session_id=session_id, at=at, within_s=within_s)
        try:
            return await self._atomic(undo)
        finally:  # its exchanges may have moved episode
            self.hot.drop(session_id)

    async def episodes(self, key: str) -> list[Episode]:
        return await self._read(partial(admin.episodes, key=key))

    async def forget(self, key: str) -> int:
        """Erase every row of `key`: secure_delete zeroes the freed pages at once; the
        copies still in the WAL go when it is checkpointed and truncated, in the
        background (`erased` says when), since a reader holding an old snapshot may
        prevent that for as long as it stays open."""
        try:
            removed = await self._atomic(partial(writes.forget, key=key))
        finally:  # and its session id may be given to a new key
            self.hot.clear()
        await self._wipe_soon()
        return removed

    async def erased(self, wait_s: float = 0.0) -> bool:
        return await self.wiped(wait_s)

    # -- operators --------------------------------------------------------------------------

    async def all_exchanges(self, key: str) -> list[Exchange]:
        return await self._read(partial(admin.all_exchanges, key=key))

    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        return await self._read(partial(usage.usage_totals, key=key, since=since))

    async def sessions(self) -> list[SessionInfo]:
        return await self._read(admin.sessions)

    async def export(self, key: str) -> dict[str, object]:
        return await self._read(partial(admin.export, key=key))
