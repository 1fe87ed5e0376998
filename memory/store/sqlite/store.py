"""`SQLiteStore`: every store port on SQLite, through aiosqlite.

One `GroupCommitWriter` (`connection`) is shared by the parts, one per port: `turns`,
`summaries`, `episodes`, `operator`, `inbox`, `locks`, `recall`; the turn state read
with an intake is kept for its turn (`memory.store.states`). Every write is one unit
of the group-commit writer, committed with the writes queued beside it and rolled back
alone if it fails, cancellation included; reads run on the reader connection, all of one
method's statements in one round trip, each served by an index and bounded by the window.
The store's methods are its parts' own, bound once here: no call goes through a layer.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from memory.recall.hot import HotKeys
from memory.store.sqlite import recall_index
from memory.store.sqlite.connection import GroupCommitWriter, Sync, check_sync
from memory.store.sqlite.episodes import SQLiteEpisodes
from memory.store.sqlite.inbox import SQLiteInbox
from memory.store.sqlite.locks import SQLiteChatLocks
from memory.store.sqlite.migrations import migrate
from memory.store.sqlite.operator import SQLiteOperatorQueries
from memory.store.sqlite.recall import SQLiteRecall
from memory.store.sqlite.summaries import SQLiteSummaries
from memory.store.sqlite.turns import SQLiteTurns
from memory.store.states import IntakeStates

log = structlog.get_logger(__name__)


class SQLiteStore:
    """Implements `memory.store.Store`. Open with `await SQLiteStore.open(path)`;
    `":memory:"` works for tests."""

    def __init__(self, db: GroupCommitWriter, path: str = ":memory:") -> None:
        self.db = db
        self._recall = recall = SQLiteRecall(db)
        self._inbox = inbox = SQLiteInbox(db)
        self._states = states = IntakeStates()
        turns = SQLiteTurns(db, recall, states)
        folding = SQLiteSummaries(db, states)
        lifecycle = SQLiteEpisodes(db, recall, states)
        operator = SQLiteOperatorQueries(db, path)
        locks = SQLiteChatLocks()
        db.on_foreign_commit = self._foreign_commit
        # TurnStore
        self.begin_turn = turns.begin_turn
        self.turn_state = turns.turn_state
        self.peek_state = turns.peek_state
        self.record_exchange = turns.record_exchange
        self.set_debug = turns.set_debug
        # SummaryStore
        self.peek_for_fold = folding.peek_for_fold
        self.signal_exchanges = folding.signal_exchanges
        self.write_summary = folding.write_summary
        # EpisodeStore
        self.start_episode = lifecycle.start_episode
        self.undo_reset = lifecycle.undo_reset
        self.forget = lifecycle.forget
        self.erased = lifecycle.erased
        # OperatorQueries, UsageQueries
        self.describe = operator.describe
        self.ping = operator.ping
        self.summaries = operator.summaries
        self.episodes = operator.episodes
        self.all_exchanges = operator.all_exchanges
        self.sessions = operator.sessions
        self.export = operator.export
        self.usage_totals = operator.usage_totals
        self.applied_migrations = operator.applied_migrations
        self.synchronous = operator.synchronous
        # DeliveryInbox, ChatLocks
        self.inbox_add = inbox.inbox_add
        self.inbox_reject = inbox.inbox_reject
        self.inbox_get = inbox.inbox_get
        self.inbox_unfinished = inbox.inbox_unfinished
        self.inbox_mark = inbox.inbox_mark
        self.inbox_delivered = inbox.inbox_delivered
        self.inbox_settled = inbox.inbox_settled
        self.inbox_prune = inbox.inbox_prune
        self.claim_turn = locks.claim_turn
        # RecallIndex
        self.recall = recall.recall
        self.recall_index_size = recall.recall_index_size
        self.recall_held = recall.recall_held

    @property
    def hot(self) -> HotKeys:
        """The recall index held in memory (tests, benches)."""
        return self._recall.hot

    @hot.setter
    def hot(self, hot: HotKeys) -> None:
        self._recall.hot = hot

    @classmethod
    async def open(
        cls, path: str | Path, *, busy_timeout_ms: int = 5000, sync: Sync = "normal"
    ) -> SQLiteStore:
        """A file gets a writer, a reader and a checkpoint connection; `":memory:"` one
        connection for all (`GroupCommitWriter.open`).

        `sync` is SQLite's `synchronous` in WAL mode. `"normal"`: a commit survives the
        process being killed, and the last ones may roll back if the machine loses
        power (the WAL is synced at checkpoints). `"full"`: each commit (a whole group
        commit batch) also waits for the WAL to reach the disk."""
        target = check_sync(sync, path)
        db = await GroupCommitWriter.open(target, busy_timeout_ms, sync, _prepare)
        return cls(db, target)

    async def close(self) -> None:
        """Stop reading keys into memory, then commit what is queued and close."""
        await self._recall.close()
        await self.db.close()

    def _foreign_commit(self) -> None:
        """Another connection wrote (a CLI next to the bot): what is held may be stale."""
        self._recall.hot.clear()
        self._recall.stats.clear()
        self._states.clear()


async def _prepare(db: GroupCommitWriter) -> None:
    """Migrations, then the recall index's backfill, on the writer alone."""
    for name in await db.exclusive(migrate):
        log.info("migration_applied", name=name)
    await db.exclusive(recall_index.build_if_needed)
