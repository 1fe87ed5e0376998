"""The connection pool every part of `PostgresStore` shares: a statement alone
(`all`, atomic on its own in autocommit), a transaction, or a pooled connection (for a
pipeline). Every write is one transaction on a pooled connection that rolls back on any
exception, `CancelledError` included (psycopg's transaction block; the pool also rolls
back or discards a connection returned mid-transaction).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

Conn = psycopg.AsyncConnection[Any]
# Every statement is prepared server-side the first time a connection runs it (psycopg's
# default waits for its fifth run): a turn's statements are a few dozen fixed texts run
# thousands of times, so parsing and analysing each once per connection is the whole
# cost, and the first runs of a pool's 16 connections are a measurable share of a short
# load (`bench.workers`). The server still plans the first runs for their parameters
# before it settles on a generic plan (`plan_cache_mode = auto`, kept on purpose: a
# forced generic plan walks a whole episode in recall's search).
PREPARE_THRESHOLD = 0


async def _utc(conn: Conn) -> None:
    await conn.execute("SET TIME ZONE 'UTC'")


class PostgresDatabase:
    """Open with `await PostgresDatabase.open(url, pool_size=16)`."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, url: str, *, pool_size: int, timeout_s: float) -> PostgresDatabase:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url,
            min_size=pool_size,  # opened at start: a burst never waits for connects
            max_size=pool_size,
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "prepare_threshold": PREPARE_THRESHOLD,
            },
            configure=_utc,
            open=False,
            timeout=timeout_s,
            name="ventana",
        )
        await pool.open(wait=True, timeout=timeout_s)
        return cls(pool)

    def connection(self) -> AbstractAsyncContextManager[Conn]:
        return self.pool.connection()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """BEGIN … COMMIT on a pooled connection; ROLLBACK on any exception,
        `CancelledError` included."""
        async with self.pool.connection() as conn, conn.transaction():
            yield conn

    async def all(self, query: str, params: Any) -> list[dict[str, Any]]:
        """One statement in autocommit (atomic on its own): its rows, if it has any."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(query, params)
            return list(await cur.fetchall()) if cur.description else []

    async def close(self) -> None:
        await self.pool.close()
