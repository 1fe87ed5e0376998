"""One chat at a time across workers: a session-level advisory lock per key, held only
while that chat's turn runs.

A worker's chat locks live on a few dedicated connections (a PostgreSQL session can
hold many advisory locks; a key always maps to the same one), so a turn waiting seconds
for its model holds no pooled connection and cross-chat concurrency is not capped by
the pool size; several of them, so the lock and unlock of a thousand chats do not queue
on one connection. Acquiring is a non-blocking `pg_try_advisory_lock` retried with a
short backoff: a blocking one would stall a shared connection for every other chat.
A worker that dies (even `kill -9`) closes its connections and the server releases its
locks at once; nothing is kept per chat once its turn ends (invariant 8).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import structlog
from psycopg.rows import dict_row

log = structlog.get_logger(__name__)

# The advisory lock class id of chat locks (migrations use the single-key form).
CHAT_LOCK_CLASS = 0x63686174  # "chat"
_TRY = "SELECT pg_try_advisory_lock(%s, hashtext(%s)) AS got"
_UNLOCK = "SELECT pg_advisory_unlock(%s, hashtext(%s)) AS released"
_FIRST_WAIT_S = 0.005
_MAX_WAIT_S = 0.1
CONNECTIONS = 4  # per worker, besides the pool


class PostgresChatLocks:
    """Open with `await PostgresChatLocks.open(conninfo)`."""

    def __init__(self, conninfo: str, connections: int = CONNECTIONS) -> None:
        self._conninfo = conninfo
        self._conns: list[psycopg.AsyncConnection[Any] | None] = [None] * connections
        self._connecting = [asyncio.Lock() for _ in range(connections)]
        self.held = 0  # locks held by this worker right now (doctor, tests)
        self.waits = 0  # acquisitions that had to wait for another worker

    @classmethod
    async def open(cls, conninfo: str, connections: int = CONNECTIONS) -> PostgresChatLocks:
        locks = cls(conninfo, connections)
        try:
            for slot in range(connections):
                await locks._connection(slot)
        except BaseException:
            await locks.close()
            raise
        return locks

    def _slot(self, key: str) -> int:
        return zlib.crc32(key.encode()) % len(self._conns)

    async def _connection(self, slot: int) -> psycopg.AsyncConnection[Any]:
        async with self._connecting[slot]:
            conn = self._conns[slot]
            if conn is None or conn.closed:
                conn = await psycopg.AsyncConnection.connect(
                    self._conninfo,
                    autocommit=True,
                    row_factory=dict_row,
                    application_name="ventana-locks",
                )
                self._conns[slot] = conn
            return conn

    async def _ask(self, sql: str, key: str) -> bool:
        slot = self._slot(key)
        conn = await self._connection(slot)
        try:
            cur = await conn.execute(sql, (CHAT_LOCK_CLASS, key))
        except psycopg.OperationalError:
            # The connection broke: the server dropped every lock it held. Reconnect
            # once; a lock being released is then already gone (False).
            await conn.close()
            conn = await self._connection(slot)
            cur = await conn.execute(sql, (CHAT_LOCK_CLASS, key))
        row = await cur.fetchone()
        return bool(row and next(iter(row.values())))

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """Wait until no other worker runs a turn of `key`, and hold it until exit. The
        connection holding the lock comes back for quick reads (in autocommit)."""
        wait = _FIRST_WAIT_S
        while not await self._ask(_TRY, key):
            if wait == _FIRST_WAIT_S:
                self.waits += 1
            await asyncio.sleep(wait)
            wait = min(wait * 2, _MAX_WAIT_S)
        self.held += 1
        try:
            yield await self._connection(self._slot(key))
        finally:
            self.held -= 1
            # Shielded: a cancelled turn must still release its chat for other workers.
            released = await asyncio.shield(self._ask(_UNLOCK, key))
            if not released:
                log.warning("chat_lock_lost", key=key)

    async def close(self) -> None:
        for conn in self._conns:
            if conn is not None:
                await conn.close()
