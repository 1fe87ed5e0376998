"""SQLite specifics: migrations, WAL, the window served by an index."""

from __future__ import annotations

from pathlib import Path

import aiosqlite

from memory.migrations import MIGRATIONS
from memory.sqlite import SQLiteStore


async def test_migrations_recorded_and_not_reapplied(tmp_path: Path) -> None:
    """Migrations are applied once, in order, and recorded by name."""
    path = tmp_path / "m.db"
    store = await SQLiteStore.open(path)
    assert await store.applied_migrations() == [name for name, _ in MIGRATIONS]
    await store.close()
    again = await SQLiteStore.open(path)
    assert await again.applied_migrations() == [name for name, _ in MIGRATIONS]
    await again.close()


async def test_wal_and_busy_timeout(tmp_path: Path) -> None:
    """The database runs in WAL mode with a busy timeout and foreign keys on."""
    store = await SQLiteStore.open(tmp_path / "w.db")
    async with store.transaction() as db:
        async with db.execute("PRAGMA journal_mode") as cur:
            assert (await cur.fetchone()) == ("wal",)
        async with db.execute("PRAGMA busy_timeout") as cur:
            assert (await cur.fetchone()) == (5000,)
        async with db.execute("PRAGMA foreign_keys") as cur:
            assert (await cur.fetchone()) == (1,)
    await store.close()


async def test_window_query_uses_index(tmp_path: Path) -> None:
    """The window and pending reads are index searches, never a table scan."""
    store = await SQLiteStore.open(tmp_path / "i.db")
    await store.close()
    async with aiosqlite.connect(tmp_path / "i.db") as db:
        for sql in (
            "SELECT id FROM exchanges WHERE episode_id = 1 AND signal = 1"
            " ORDER BY id DESC LIMIT 6",
            "SELECT id FROM exchanges WHERE episode_id = 1 AND signal = 1 AND id > 3 AND id < 9"
            " ORDER BY id",
        ):
            async with db.execute("EXPLAIN QUERY PLAN " + sql) as cur:
                plan = " ".join(str(row[-1]) for row in await cur.fetchall())
            assert "USING COVERING INDEX exchanges_window" in plan or (
                "USING INDEX exchanges_window" in plan
            ), plan
            assert "SCAN" not in plan.replace("SCAN exchanges USING", ""), plan
