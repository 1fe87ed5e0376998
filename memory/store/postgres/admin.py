"""Operator and erasure queries of `PostgresStore`: listings, export, forget. Not on
the write path of a turn; kept apart so the store module stays about the turn. Recall
lives in `recall.py`."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import psycopg

from memory.store.conversation import SessionInfo
from memory.store.postgres import sql
from memory.store.postgres.rows import episode_row, exchange_row, plain
from memory.types import Episode, Exchange


class PostgresOperatorQueries:
    """Mixed into `PostgresStore`, which provides the pool and the transactions."""

    if TYPE_CHECKING:

        def transaction(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]: ...
        async def _all(self, query: str, params: Any) -> list[dict[str, Any]]: ...

    async def episodes(self, key: str) -> list[Episode]:
        return [episode_row(r) for r in await self._all(sql.EPISODES_OF_KEY, (key,))]

    async def all_exchanges(self, key: str) -> list[Exchange]:
        """Every exchange of a key, noise included (operators and export only)."""
        return [exchange_row(r) for r in await self._all(sql.EXCHANGES_OF_KEY, (key,))]

    async def sessions(self) -> list[SessionInfo]:
        return [
            SessionInfo(
                r["key"],
                r["created_at"],
                r["last_activity_at"],
                int(r["exchanges"]),
                int(r["noise"]),
                int(r["episodes"]),
                int(r["summary_versions"]),
                bool(r["debug"]),
            )
            for r in await self._all(sql.SESSIONS, ())
        ]

    async def export(self, key: str) -> dict[str, object]:
        """Every stored row of `key`, as plain JSON-able data (the right of access)."""
        out: dict[str, object] = {"key": key}
        for name, query in sql.EXPORT.items():
            rows = [plain(r) for r in await self._all(query, (key,))]
            out[name] = (rows[0] if rows else []) if name == "session" else rows
        return out

    async def forget(self, key: str) -> int:
        """Erase every row of `key` in one transaction (cascading to episodes, exchanges,
        summaries and their recall vectors). A fold in flight on another worker either
        committed first (and is erased with the rest) or finds its episode gone."""
        async with self.transaction() as conn:
            removed = (await conn.execute(sql.FORGET_INBOX, (key,))).rowcount
            removed += (await conn.execute(sql.FORGET_SESSION, (key,))).rowcount
        return removed

    async def erased(self, wait_s: float = 0.0) -> bool:
        """On PostgreSQL a forget is complete when its transaction commits: no reader can
        see the rows again and no snapshot holds up the erasure. The dead tuples' bytes
        stay in table pages until autovacuum reuses them (README: what forget guarantees)."""
        return True
