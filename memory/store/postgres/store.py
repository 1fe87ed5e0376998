"""`PostgresStore`: every store port on PostgreSQL, shared by several workers.

Same semantics as `SQLiteStore` (the contract suite runs on both); what changes is who
else may be writing. Across workers: intake dedupes on the inbox's unique constraint; a
chat's turns take turns through `claim_turn` (a per-chat advisory lock, then the chat's
unfinished entries in arrival order); folds race through `write_summary`'s
compare-and-set on the episode's row lock and `UNIQUE (episode_id, version)`.

One `PostgresDatabase` (`connection`, the pool) is shared by the parts, one per port:
`turns`, `summaries`, `episodes`, `operator`, `inbox`, `locks`, `recall`; the turn
state read with an intake is kept for its turn (`memory.store.states`). The store's
methods are its parts' own, bound once here: no call goes through a layer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memory.store.postgres.connection import Conn, PostgresDatabase
from memory.store.postgres.episodes import PostgresEpisodes
from memory.store.postgres.inbox import PostgresInbox
from memory.store.postgres.locks import PostgresChatLocks, PostgresClaims
from memory.store.postgres.migrations import migrate
from memory.store.postgres.operator import PostgresOperatorQueries
from memory.store.postgres.recall import PostgresRecall
from memory.store.postgres.summaries import PostgresSummaries
from memory.store.postgres.turns import PostgresTurns
from memory.store.states import IntakeStates


class PostgresStore:
    """Implements `memory.store.Store`. Open with `await PostgresStore.open(url,
    pool_size=16)`."""

    def __init__(self, db: PostgresDatabase, locks: PostgresChatLocks, url: str) -> None:
        self.db = db
        self.locks = locks
        states = IntakeStates()
        turns = PostgresTurns(db, states)
        folding = PostgresSummaries(db, states)
        lifecycle = PostgresEpisodes(db, states)
        operator = PostgresOperatorQueries(db, locks, url)
        claims = PostgresClaims(locks, turns.stamps, states)
        self._inbox = inbox = PostgresInbox(db, locks, claims)
        recall = PostgresRecall(db)
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
        self.server_version = operator.server_version
        self.pool_state = operator.pool_state
        # DeliveryInbox, ChatLocks
        self.inbox_add = inbox.inbox_add
        self.inbox_reject = inbox.inbox_reject
        self.inbox_get = inbox.inbox_get
        self.inbox_unfinished = inbox.inbox_unfinished
        self.inbox_mark = inbox.inbox_mark
        self.inbox_delivered = inbox.inbox_delivered
        self.inbox_settled = inbox.inbox_settled
        self.inbox_prune = inbox.inbox_prune
        self.claim_turn = claims.claim_turn
        # RecallIndex
        self.recall = recall.recall
        self.recall_index_size = recall.recall_index_size

    @classmethod
    async def open(
        cls, url: str, *, pool_size: int = 16, timeout_s: float = 10.0
    ) -> PostgresStore:
        db = await PostgresDatabase.open(url, pool_size=pool_size, timeout_s=timeout_s)
        try:
            async with db.connection() as conn:
                await migrate(conn)
            locks = await PostgresChatLocks.open(url)
        except BaseException:
            await db.close()
            raise
        return cls(db, locks, url)

    async def close(self) -> None:
        try:
            await self._inbox.inbox_settled()
        finally:
            await self.locks.close()
            await self.db.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """BEGIN … COMMIT on a pooled connection (tests hold the pool with it)."""
        async with self.db.transaction() as conn:
            yield conn
