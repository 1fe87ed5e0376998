"""Operator, erasure and recall queries of `PostgresStore`: listings, export, forget,
full-text search. Not on the write path of a turn; kept apart so the store module stays
about the turn."""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import psycopg

from memory.store.conversation import SessionInfo
from memory.store.postgres import sql
from memory.store.postgres.rows import episode_row, exchange_row, plain
from memory.types import Episode, Exchange

_WORD = re.compile(r"\w+", re.UNICODE)


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
        summaries and their search vectors). A fold in flight on another worker either
        committed first (and is erased with the rest) or finds its episode gone."""
        async with self.transaction() as conn:
            removed = (await conn.execute(sql.FORGET_INBOX, (key,))).rowcount
            removed += (await conn.execute(sql.FORGET_SESSION, (key,))).rowcount
        return removed

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        """Indexed exchanges of `key` and the search index's size on disk (all keys)."""
        rows = await self._all(sql.RECALL_INDEX_SIZE, (key,))
        return (int(rows[0]["indexed"]), int(rows[0]["bytes"])) if rows else (0, 0)

    async def erased(self, wait_s: float = 0.0) -> bool:
        """On PostgreSQL a forget is complete when its transaction commits: no reader can
        see the rows again and no snapshot holds up the erasure. The dead tuples' bytes
        stay in table pages until autovacuum reuses them (README: what forget guarantees)."""
        return True

    async def recall_search(
        self,
        key: str,
        episode_id: int,
        query_terms: Sequence[str],
        below_exchange_id: int,
        limit: int,
    ) -> list[tuple[int, float]]:
        """(exchange id, score) of the signal exchanges of `key`'s episode older than
        `below_exchange_id` that match any term (accent-folded, lower-cased, prefix
        match), best first. Terms are reduced to their word characters, so user text
        can never inject tsquery syntax."""
        words = [w for term in query_terms for w in _WORD.findall(term)]
        if not words or limit <= 0:
            return []
        query = " | ".join(f"{w}:*" for w in dict.fromkeys(words))
        params = {
            "query": query,
            "key": key,
            "ep": episode_id,
            "below": below_exchange_id,
            "limit": limit,
        }
        return [(int(r["id"]), float(r["score"])) for r in await self._all(sql.RECALL, params)]
