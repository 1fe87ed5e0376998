"""SQLite specifics: migrations, WAL, the window served by an index."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import aiosqlite
import pytest

from memory.store.sqlite.migrations import MIGRATIONS
from memory.store.sqlite.store import SQLiteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


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
    assert await store.synchronous() == "normal"
    await store.close()


@pytest.mark.parametrize(("sync", "level"), [("normal", 1), ("full", 2)])
async def test_sync_setting_reaches_every_connection(
    tmp_path: Path, sync: str, level: int
) -> None:
    """`sync="full"` makes every commit wait for the disk, on the writer, the reader and
    the checkpoint connection alike; anything else is refused before a file is opened."""
    store = await SQLiteStore.open(tmp_path / "s.db", sync=sync)  # type: ignore[arg-type]
    try:
        for conn in (store._w, store._r, store._c):
            assert conn is not None
            async with conn.execute("PRAGMA synchronous") as cur:
                assert (await cur.fetchone()) == (level,)
    finally:
        await store.close()
    with pytest.raises(ValueError, match="sync"):
        await SQLiteStore.open(tmp_path / "never.db", sync="off")  # type: ignore[arg-type]
    assert not (tmp_path / "never.db").exists()


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


async def _in_main_file(path: Path, key: str) -> int:
    """Inbox rows of `key` in the database file proper, ignoring the WAL: what a
    checkpoint has copied back."""
    import sqlite3

    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'inbox'").fetchall():
            return 0  # not even the schema has been copied back yet
        sql = "SELECT COUNT(*) FROM inbox WHERE session_key = ?"
        return int(con.execute(sql, (key,)).fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("every", [10, 10_000])
async def test_wal_is_checkpointed_in_the_background_not_by_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int
) -> None:
    """Checkpoints run on a connection of their own every `_CHECKPOINT_EVERY` batches;
    the commits replies wait on do not copy the WAL back themselves (below the 40 MB
    safety net), so with checkpoints far apart nothing reaches the main file."""
    import memory.store.sqlite.store

    monkeypatch.setattr(memory.store.sqlite.store, "_CHECKPOINT_EVERY", every)
    path = tmp_path / "c.db"
    store = await SQLiteStore.open(path)
    try:
        for i in range(60):  # 6 MB: past the 1,000 pages where SQLite's own would run
            await store.inbox_add("telegram:7", f"m{i}", "u", "text", "hola " * 20_000, T0)
        if store._checkpointing is not None:
            await store._checkpointing
        if every == 10:
            assert store.checkpoints >= 1
            assert await _in_main_file(path, "telegram:7") >= 10
        else:
            assert store.checkpoints == 0
            assert await _in_main_file(path, "telegram:7") == 0
    finally:
        await store.close()


@dataclass
class Batches:
    """The size of each write batch, in order; the first one is held until `release`."""

    sizes: list[int] = field(default_factory=list)
    first: asyncio.Event = field(default_factory=asyncio.Event)  # set once it is held
    release: asyncio.Event = field(default_factory=asyncio.Event)


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> Batches:
    import memory.store.sqlite.store

    seen = Batches()
    on_thread = memory.store.sqlite.store._on_thread

    async def recording(db: object, fn: object) -> object:
        if isinstance(fn, partial) and fn.func is memory.store.sqlite.store._in_batch:
            seen.sizes.append(len(fn.args[0]))
            if len(seen.sizes) == 1:
                seen.first.set()
                await seen.release.wait()
        return await on_thread(db, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.store.sqlite.store, "_on_thread", recording)
    return seen


async def _add(store: SQLiteStore, name: str, loop_turns: int = 0) -> None:
    """An inbox write after `loop_turns` turns of the event loop."""
    for _ in range(loop_turns):
        await asyncio.sleep(0)
    await store.inbox_add("telegram:9", name, "u", "text", "hola", T0)


@pytest.mark.parametrize(("chats", "expected"), [(5, [5, 6]), (2, [2, 1, 2])])
async def test_under_load_the_next_batch_gathers_the_callers_just_answered(
    batches: Batches, chats: int, expected: list[int]
) -> None:
    """Under load a write queued while a batch runs does not go alone: the next batch
    waits a few loop turns, and the callers the first batch answered, writing again
    meanwhile (as a turn writes its exchange after its intake), join it (without
    gathering: [5, 1, 5]). Two chats are not load: nothing waits."""
    store = await SQLiteStore.open(":memory:")
    try:

        async def chat(i: int) -> None:  # a write, some work on the loop, the next write
            await _add(store, f"a{i}")
            await _add(store, f"b{i}", loop_turns=3)

        tasks = [asyncio.ensure_future(chat(i)) for i in range(chats)]
        await batches.first.wait()  # the chats' first writes, held
        straggler = asyncio.ensure_future(_add(store, "late"))
        await asyncio.sleep(0)  # queued behind the first batch
        batches.release.set()
        await asyncio.gather(*tasks, straggler)
        assert batches.sizes == expected
    finally:
        await store.close()


@pytest.mark.parametrize(("first", "together"), [(1, False), (2, False), (4, True)])
async def test_gathering_waits_only_after_a_batch_of_several(
    batches: Batches, first: int, together: bool
) -> None:
    """The committer gathers only under load, at least `_GATHER_SIBLINGS` writes just
    committed or queued: one or two chats at a time never have their next write held
    back waiting for company."""
    batches.release.set()
    store = await SQLiteStore.open(":memory:")
    try:
        await asyncio.gather(*(_add(store, f"a{i}") for i in range(first)))
        await asyncio.gather(_add(store, "b", loop_turns=1), _add(store, "c", loop_turns=4))
        assert batches.sizes == ([first, 2] if together else [first, 1, 1])
    finally:
        await store.close()
