"""`RecallIndex` on SQLite: the part of `SQLiteStore` that searches (FTS5 through
`recall_index`) and keeps the keys searched lately in memory (`memory.recall.hot`), and
what the searches on disk read of the keys' statistics (`memory.recall.stats`), both
exact because one process owns the file: the turns and episodes parts update them."""

from __future__ import annotations

import asyncio
import sqlite3
from functools import partial

import structlog

from memory.recall.hot import HotKeys, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import Hit
from memory.recall.stats import KeyStats, Known
from memory.store.sqlite import recall_index
from memory.store.sqlite.connection import GroupCommitWriter

log = structlog.get_logger(__name__)
HOLDING_AT_ONCE = 2  # keys read into memory at a time (`_hold_soon`)


class SQLiteRecall:
    """The recall part of `SQLiteStore`."""

    def __init__(self, db: GroupCommitWriter) -> None:
        self.db = db
        self.hot = HotKeys()  # recently searched keys' recall index, kept exact here
        self.stats = KeyStats()  # the keys' statistics the searches on disk read so far
        self._holding: dict[int, asyncio.Task[None]] = {}  # keys being read into `hot`

    async def close(self) -> None:
        """Stop reading keys into memory."""
        holding = list(self._holding.values())
        for task in holding:
            task.cancel()
        if holding:
            await asyncio.wait(holding)

    async def recall(self, query: RecallQuery) -> list[Hit]:
        """From memory when the key was searched lately (`memory.recall.hot`); else on
        disk (FTS5), while the key's index is read into memory in the background."""
        if not query.terms or query.limit <= 0:
            return []
        if query.previous is not None:  # memory holds the current episode only
            return await self._on_disk(query)
        hits = self.hot.search(query)
        if hits is not None:
            return hits
        self._hold_soon(query.session_id, query.episode_id)
        return await self._on_disk(query)

    async def _on_disk(self, query: RecallQuery) -> list[Hit]:
        """FTS5, over the key's statistics as far as they are known: the vocabulary is
        read only for the rest, and what it gives is kept (`memory.recall.stats`)."""
        known = self.stats.lookup(query.session_id, [q.term for q in query.terms])
        hits, docs, df = await self.db.read(partial(_search, query=query, known=known))
        self.stats.learn(known, docs, df)
        return hits

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
                after = await self.db.read(read)
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
        return await self.db.read(partial(recall_index.size, key=key))


def _search(
    db: sqlite3.Connection, query: RecallQuery, known: Known
) -> tuple[list[Hit], int | None, dict[str, int]]:
    """The hits, and what was read of the key's statistics (`KeyStats.learn`)."""
    docs: int | None = None
    df: dict[str, int] = {}
    if known.missing or known.docs is None:
        docs, df = recall_index.key_stats(
            db, query.session_id, known.missing, docs=known.docs is None
        )
    count, every = known.merged(docs, df)
    return recall_index.search_with(db, query, count, every), docs, df
