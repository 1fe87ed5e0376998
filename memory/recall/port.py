"""The recall port: what a store offers the engine to search a key's older exchanges.

SQLite implements it with FTS5 (`memory.store.sqlite.recall_index`); a PostgreSQL
backend implements the same method with its full-text search and the same pure ranking
(`memory.recall.rank`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory.recall.rank import Hit
from memory.recall.terms import QueryTerm


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """One search: the indexed signal exchanges of a session's episode with
    `id < before` (None: no bound) that match `terms`, at most `limit` of them; and
    when `previous` names the episode a recent automatic reset closed, every exchange of
    that one too, its hits ranked first (`memory.recall.rank.rank_with_previous`).
    `vector`: the message's embedding (`memory.recall.dense.embed`) and `text` the
    message; a search held in memory chooses among BM25's hits and the exchanges nearest
    it (`memory.recall.rerank`), the others ignore both."""

    session_id: int
    episode_id: int
    terms: tuple[QueryTerm, ...]
    before: int | None = None
    limit: int = 8
    previous: int | None = None
    vector: Any = field(default=None, compare=False, repr=False)
    text: str = field(default="", compare=False, repr=False)


@runtime_checkable
class RecallIndex(Protocol):
    async def recall(self, query: RecallQuery) -> list[Hit]:
        """The best hits of `query`, best first; only its session's entries are read."""
        ...

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        """(indexed exchanges of `key`, bytes of the whole recall index)."""
        ...
