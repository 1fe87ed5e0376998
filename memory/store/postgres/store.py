"""`PostgresStore`: the conversation store on PostgreSQL, shared by several workers.

Same semantics as `SQLiteStore` (the contract suite runs on both); what changes is who
else may be writing. Across workers: intake dedupes on the inbox's unique constraint; a
chat's turns take turns through `claim_turn` (a per-chat advisory lock, then the chat's
unfinished entries in arrival order); folds race through `write_summary`'s
compare-and-set on the episode's row lock and `UNIQUE (episode_id, version)`.

Every write is one transaction on a pooled connection that rolls back on any exception,
`CancelledError` included (psycopg's transaction block; the pool also rolls back or
discards a connection returned mid-transaction).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import psycopg
import structlog
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from memory.store.conversation import NewEpisode, NewExchange, NewSummary
from memory.store.inbox import DoneMarks
from memory.store.postgres import sql
from memory.store.postgres.admin import PostgresOperatorQueries
from memory.store.postgres.inbox import PostgresDeliveryInbox
from memory.store.postgres.locks import PostgresChatLocks
from memory.store.postgres.migrations import migrate
from memory.store.postgres.recall import PostgresRecallIndex, indexed
from memory.store.postgres.rows import summary_row
from memory.store.postgres.turn import (
    create_and_peek,
    ensure_session,
    open_episode,
    peek_state,
    signal_exchanges,
    undo_reset,
)
from memory.store.postgres.usage import PostgresUsageQueries
from memory.types import Episode, Exchange, SummaryVersion, TurnState

log = structlog.get_logger(__name__)
Conn = psycopg.AsyncConnection[Any]
SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(SCHEMES)


async def _utc(conn: Conn) -> None:
    await conn.execute("SET TIME ZONE 'UTC'")


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


class PostgresStore(
    PostgresDeliveryInbox, PostgresOperatorQueries, PostgresUsageQueries, PostgresRecallIndex
):
    """Open with `await PostgresStore.open(url, pool_size=16)`."""

    def __init__(self, pool: AsyncConnectionPool[Any], locks: PostgresChatLocks) -> None:
        self._pool = pool
        self.locks = locks
        self._delivering = DoneMarks()  # done marks running
        self._stamps: dict[int, str] = {}
        self._claimed: dict[int, str] = {}

    @classmethod
    async def open(
        cls, url: str, *, pool_size: int = 16, timeout_s: float = 10.0
    ) -> PostgresStore:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url,
            min_size=pool_size,  # opened at start: a burst never waits for connects
            max_size=pool_size,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=_utc,
            open=False,
            timeout=timeout_s,
            name="ventana",
        )
        await pool.open(wait=True, timeout=timeout_s)
        try:
            async with pool.connection() as conn:
                await migrate(conn)
            locks = await PostgresChatLocks.open(url)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, locks)

    async def close(self) -> None:
        try:
            await self.inbox_settled()
        finally:
            await self.locks.close()
            await self._pool.close()

    async def ping(self) -> bool:
        async with self._pool.connection() as conn:
            cur = await conn.execute("SELECT 1 AS one")
            return (await cur.fetchone()) is not None

    async def server_version(self) -> str:
        async with self._pool.connection() as conn:
            cur = await conn.execute("SHOW server_version")
            row = await cur.fetchone()
        return str(row["server_version"]) if row else "unknown"

    def pool_state(self) -> dict[str, int]:
        """Pool size, idle connections, waiting requests, chat locks held (doctor)."""
        stats = self._pool.get_stats()
        return {
            "size": stats.get("pool_size", 0),
            "max": self._pool.max_size,
            "idle": stats.get("pool_available", 0),
            "waiting": stats.get("requests_waiting", 0),
            "chat_locks": self.locks.held,
        }

    async def applied_migrations(self) -> list[str]:
        return [
            r["name"]
            for r in await self._all("SELECT name FROM schema_migrations ORDER BY version", ())
        ]

    # -- transactions -------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """BEGIN … COMMIT on a pooled connection; ROLLBACK on any exception,
        `CancelledError` included."""
        async with self._pool.connection() as conn, conn.transaction():
            yield conn

    async def _all(self, query: str, params: Any) -> list[dict[str, Any]]:
        """One statement in autocommit (atomic on its own): its rows, if it has any."""
        async with self._pool.connection() as conn:
            cur = await conn.execute(query, params)
            return list(await cur.fetchall()) if cur.description else []

    # -- sessions and episodes ----------------------------------------------------------

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state of `key`, creating the session (and first episode) when new."""
        state = await self.peek_state(key, window)
        if state is None:
            async with self.transaction() as conn:
                state = await create_and_peek(conn, key, at, window)
        return state

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        async with self._pool.connection() as conn:
            return await peek_state(conn, key, window)

    async def peek_for_fold(
        self, key: str, window: int, opening: int, *, due: int = 1
    ) -> tuple[TurnState, list[Exchange]] | None:
        """`peek_state` and the first `opening` signal exchanges of the current episode;
        with fewer than `due` pending the opening is not read (it comes back empty)."""
        async with self._pool.connection() as conn:
            state = await peek_state(conn, key, window)
            if state is None:
                return None
            if len(state.pending) < max(due, 1):
                return state, []
            return state, await signal_exchanges(conn, state.episode.id, 0, limit=opening)

    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        """Add or remove `user` from the key's debug operators (debug is per operator)."""
        async with self.transaction() as conn:
            await ensure_session(conn, key, at)
            await conn.execute(sql.DEBUG_ON if on else sql.DEBUG_OFF, {"user": user, "key": key})

    async def start_episode(self, new: NewEpisode) -> Episode:
        """Close the current episode (its summaries stay as its record) and open a new one."""
        session_id, opened_by, signals, at, carry_over = (
            new.session_id, new.opened_by, new.signals, new.at, new.carry_over
        )  # fmt: skip
        async with self.transaction() as conn:
            cur = await conn.execute(sql.SESSION_LOCK, (session_id,))
            row = await cur.fetchone()
            if row is not None and row["current_episode_id"] is not None:
                await conn.execute(sql.EPISODE_CLOSE, (at, opened_by, row["current_episode_id"]))
            new_id = await open_episode(
                conn, session_id, opened_by, signals, at, carry_over, new.previous
            )
        return Episode(
            new_id,
            session_id,
            at,
            opened_by=opened_by,
            carry_over=tuple(carry_over),
            previous=new.previous,
        )

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        """Reopen the previous episode (see `turn.undo_reset`)."""
        async with self.transaction() as conn:
            return await undo_reset(conn, session_id, at, within_s)

    # -- exchanges and summaries --------------------------------------------------------

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
        (row,) = await self._all(sql.RECORD_EXCHANGE, params)
        return Exchange(
            int(row["id"]), new.episode_id, new.user_text, new.reply_text, new.signal,
            new.noise_reason, new.created_at,
        )  # fmt: skip

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        async with self._pool.connection() as conn:
            return await signal_exchanges(conn, episode_id, after, upto, limit)

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        """Write version base+1 with its checkpoint atomically, or nothing when stale:
        another fold (on any worker) won, the episode was reset or forgotten, or the
        checkpoint would move back. The open episode's row is locked first, so folds,
        resets and forgets of one episode take turns."""
        try:
            async with self.transaction() as conn:
                cur = await conn.execute(sql.EPISODE_OPEN_LOCK, (new.episode_id,))
                if await cur.fetchone() is None:
                    return None
                cur = await conn.execute(sql.SUMMARY_LATEST, (new.episode_id,))
                latest = await cur.fetchone()
                assert latest is not None
                if latest["latest"] != new.base_version or new.checkpoint < latest["checkpoint"]:
                    return None
                version, rounds = new.base_version + 1, int(latest["rounds"]) + 1
                cur = await conn.execute(
                    sql.SUMMARY_INSERT,
                    {
                        "episode": new.episode_id, "version": version, "text": new.text,
                        "checkpoint": new.checkpoint, "prompt_version": new.prompt_version,
                        "model": new.model, "source_from": new.source_from,
                        "source_to": new.source_to, "input_tokens": new.input_tokens,
                        "output_tokens": new.output_tokens, "round": rounds,
                        "at": new.created_at,
                        "dropped": json.dumps(list(new.dropped_facts), ensure_ascii=False),
                    },
                )  # fmt: skip
                row = await cur.fetchone()
                assert row is not None
        except psycopg.errors.UniqueViolation:  # a concurrent fold wrote this version
            return None
        return SummaryVersion(
            int(row["id"]), new.episode_id, version, new.text, new.checkpoint,
            new.prompt_version, new.model, new.source_from, new.source_to,
            new.input_tokens, new.output_tokens, rounds, new.created_at,
        )  # fmt: skip

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        return [summary_row(r) for r in await self._all(sql.SUMMARIES, (episode_id,))]
