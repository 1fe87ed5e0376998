"""The recall port: what a store offers the engine to search a key's older exchanges.

SQLite implements it with FTS5 (`memory.store.sqlite.recall_index`); a PostgreSQL
backend implements the same method with its full-text search and the same pure ranking
(`memory.recall.rank`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory.recall.rank import Hit
from memory.recall.terms import QueryTerm


@runtime_checkable
class RecallIndex(Protocol):
    async def recall(
        self,
        session_id: int,
        episode_id: int,
        query: Sequence[QueryTerm],
        before: int | None,
        limit: int,
    ) -> list[Hit]:
        """The best indexed signal exchanges of the episode with `id < before` (None: no
        bound) for `query`, best first, at most `limit`; only that session's entries
        are read."""
        ...

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        """(indexed exchanges of `key`, bytes of the whole recall index)."""
        ...
