"""SQLite's health: a database that takes no writes, a file that is not one."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from memory.store import StoreUnavailable
from memory.store.sqlite.store import SQLiteStore


async def test_ping_reports_a_database_that_takes_no_writes(tmp_path: Path) -> None:
    """`ping` (what /healthz asks) is a write rolled back: false once the writer cannot
    write (SQLITE_READONLY, as a read-only file or disk gives), true again after, and the
    data is untouched by the check."""
    store = await SQLiteStore.open(tmp_path / "v.db")
    try:
        assert await store.ping()
        version = await store.db.exclusive(lambda db: db.execute("PRAGMA user_version").fetchone())
        await store.db.exclusive(lambda db: db.execute("PRAGMA query_only = ON"))
        assert not await store.ping()
        await store.db.exclusive(lambda db: db.execute("PRAGMA query_only = OFF"))
        assert await store.ping()
        after = await store.db.exclusive(lambda db: db.execute("PRAGMA user_version").fetchone())
        assert tuple(after) == tuple(version)
    finally:
        await store.close()


async def test_a_file_that_is_not_a_database_is_named_and_closed(tmp_path: Path) -> None:
    """Opening garbage raises `StoreUnavailable` naming the file; no connection thread is
    left behind to keep the process alive."""

    bad = tmp_path / "bad.db"
    bad.write_bytes(b"\x00garbage" * 4096)
    before = threading.active_count()
    with pytest.raises(StoreUnavailable, match=r"bad\.db"):
        await SQLiteStore.open(bad)
    for _ in range(50):
        if threading.active_count() <= before:
            break
        await asyncio.sleep(0.02)
    assert threading.active_count() <= before
