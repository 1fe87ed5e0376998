"""SQLite specifics: migrations, WAL, the window served by an index, the group-commit
writer (round trips, batches, rollback), lazily committed done marks."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import aiosqlite
import pytest

from memory.store.sqlite.migrations import MIGRATIONS
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from memory.types import InboxEntry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_migrations_recorded_and_not_reapplied(tmp_path: Path) -> None:
    """Migrations are applied once, in order, and recorded by name."""
    path = tmp_path / "m.db"
    store = await SQLiteStore.open(path)
    assert await store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert (await store.applied_migrations())[:3] == [
        "0001_initial",
        "0002_episode_reopened_at",
        "0003_inbox_rejected_reason",
    ]
    await store.close()
    again = await SQLiteStore.open(path)
    assert await again.applied_migrations() == [name for name, _ in MIGRATIONS]
    await again.close()


async def test_wal_and_busy_timeout(tmp_path: Path) -> None:
    """The database runs in WAL mode with a busy timeout and foreign keys on."""
    store = await SQLiteStore.open(tmp_path / "w.db")
    db = store.db._w
    async with db.execute("PRAGMA journal_mode") as cur:
        assert tuple(await cur.fetchone() or ()) == ("wal",)
    async with db.execute("PRAGMA busy_timeout") as cur:
        assert tuple(await cur.fetchone() or ()) == (5000,)
    async with db.execute("PRAGMA foreign_keys") as cur:
        assert tuple(await cur.fetchone() or ()) == (1,)
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
        for conn in (store.db._w, store.db._r, store.db._c):
            assert conn is not None
            async with conn.execute("PRAGMA synchronous") as cur:
                assert tuple(await cur.fetchone() or ()) == (level,)
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
    import memory.store.sqlite.connection

    monkeypatch.setattr(memory.store.sqlite.connection, "_CHECKPOINT_EVERY", every)
    path = tmp_path / "c.db"
    store = await SQLiteStore.open(path)
    try:
        for i in range(60):  # 6 MB: past the 1,000 pages where SQLite's own would run
            await store.inbox_add("telegram:7", f"m{i}", "u", "text", "hola " * 20_000, T0)
        if store.db._checkpointing is not None:
            await store.db._checkpointing
        if every == 10:
            assert store.db.checkpoints >= 1
            assert await _in_main_file(path, "telegram:7") >= 10
        else:
            assert store.db.checkpoints == 0
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
    import memory.store.sqlite.connection

    seen = Batches()
    on_thread = memory.store.sqlite.connection._on_thread

    async def recording(db: object, fn: object) -> object:
        if isinstance(fn, partial) and fn.func is memory.store.sqlite.connection._in_batch:
            seen.sizes.append(len(fn.args[0]))
            if len(seen.sizes) == 1:
                seen.first.set()
                await seen.release.wait()
        return await on_thread(db, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.store.sqlite.connection, "_on_thread", recording)
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


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per round trip to a connection's thread (`_on_thread`), from now on."""
    import memory.store.sqlite.connection

    seen: list[int] = []
    on_thread = memory.store.sqlite.connection._on_thread

    async def counting(db: object, fn: object) -> object:
        seen.append(1)
        return await on_thread(db, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.store.sqlite.connection, "_on_thread", counting)
    return seen


async def _session(store: SQLiteStore, key: str, n: int) -> tuple[int, int]:
    state = await store.turn_state(key, 1, T0)
    for i in range(n):
        new = NewExchange(state.session_id, state.episode.id, f"u{i}", f"r{i}", True, None, T0)
        await store.record_exchange(new)
    return state.session_id, state.episode.id


def _delete_then_fail(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM exchanges")
    raise RuntimeError("boom")


async def test_failed_write_rolls_back(tmp_path: Path) -> None:
    """A unit of work that raises leaves no partial write, and its caller gets the error."""
    store = await SQLiteStore.open(tmp_path / "r.db")
    try:
        await _session(store, "console:r", 1)
        with pytest.raises(RuntimeError, match="boom"):
            await store.db.atomic(_delete_then_fail)
        assert len(await store.all_exchanges("console:r")) == 1
    finally:
        await store.close()


async def test_a_cancelled_caller_cannot_split_its_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelling a caller whose write is on the writer's thread does not cut the
    transaction short: the write commits whole, and the store stays usable."""
    import memory.store.sqlite.connection as connection

    store = await SQLiteStore.open(tmp_path / "c.db")
    try:
        session_id, episode_id = await _session(store, "console:c", 2)
        on_thread, held, release = connection._on_thread, asyncio.Event(), asyncio.Event()

        async def holding(db: object, fn: object) -> object:
            if isinstance(fn, partial) and fn.func is connection._in_batch:
                held.set()
                await release.wait()
            return await on_thread(db, fn)  # type: ignore[arg-type]

        monkeypatch.setattr(connection, "_on_thread", holding)
        new = NewExchange(session_id, episode_id, "late", "reply", True, None, T0)
        task = asyncio.ensure_future(store.record_exchange(new))
        await held.wait()  # its batch is on its way to the writer
        task.cancel()
        release.set()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
        if store.db._committer is not None:  # the batch goes on without its caller
            await asyncio.wait([store.db._committer])
        stored = await store.all_exchanges("console:c")
        assert [e.user_text for e in stored] == ["u0", "u1", "late"]
        state = await store.turn_state("console:c", 5, T0)
        assert state.last_activity == T0  # the session was touched in the same unit
        await _session(store, "console:c", 1)
        assert len(await store.all_exchanges("console:c")) == 4
    finally:
        await store.close()


async def test_concurrent_writes_commit_together_and_fail_alone(
    tmp_path: Path, trips: list[int]
) -> None:
    """Group commit: writes issued at once share a few transactions (not one round trip
    each), and one that fails — an exchange for an episode that does not exist — is
    rolled back alone and raises to its own caller only."""
    store = await SQLiteStore.open(tmp_path / "g.db")
    try:
        state = await store.turn_state("console:g", 2, T0)
        trips.clear()

        def exchange(episode_id: int, i: int) -> NewExchange:
            return NewExchange(state.session_id, episode_id, f"u{i}", f"r{i}", True, None, T0)

        writes = [store.record_exchange(exchange(state.episode.id, i)) for i in range(20)]
        writes.insert(10, store.record_exchange(exchange(999_999, 99)))
        results = await asyncio.gather(*writes, return_exceptions=True)
        assert isinstance(results[10], sqlite3.IntegrityError)
        assert not [r for i, r in enumerate(results) if i != 10 and isinstance(r, BaseException)]
        assert len(trips) <= 3, f"{len(trips)} round trips for 21 writes"
        stored = await store.all_exchanges("console:g")
        assert [e.user_text for e in stored] == [f"u{i}" for i in range(20)]
    finally:
        await store.close()


async def test_done_mark_rides_the_next_write_or_commits_alone(
    tmp_path: Path, trips: list[int]
) -> None:
    """A delivered entry's done mark starts no round trip of its own: the next write
    carries it, and without one it is committed alone shortly after."""
    import memory.store.sqlite.connection

    store = await SQLiteStore.open(tmp_path / "d.db")
    try:
        a = await store.inbox_add("telegram:44", "m1", "u", "text", "hola", T0)
        b = await store.inbox_add("telegram:44", "m2", "u", "text", "otra", T0)
        assert a is not None
        assert b is not None
        trips.clear()
        store.inbox_delivered(a.id, at=T0)
        marked = store._inbox.delivering[a.id]
        await asyncio.sleep(0)
        assert len(trips) == 0
        assert not marked.done()
        await store.inbox_add("telegram:44", "m3", "u", "text", "y otra", T0)
        assert marked.done()
        assert len(trips) == 1
        store.inbox_delivered(b.id, at=T0)
        alone = store._inbox.delivering[b.id]
        delay = memory.store.sqlite.connection._MARK_DELAY_S
        await asyncio.wait_for(alone, timeout=delay + 2)
        assert len(trips) == 2
        assert [e.external_id for e in await store.inbox_unfinished()] == ["m3"]
        rows = await store.db._r.execute_fetchall("SELECT status FROM inbox ORDER BY id")
        assert [row["status"] for row in rows] == ["done", "done", "pending"]
    finally:
        await store.close()


async def test_rows_are_read_by_column_name(tmp_path: Path) -> None:
    """Every connection hands rows out as `sqlite3.Row`, so mappers read columns by
    name and a new column cannot shift the others."""
    store = await SQLiteStore.open(tmp_path / "n.db")
    try:
        for conn in (store.db._w, store.db._r, store.db._c):
            assert conn is not None
            assert conn.row_factory is sqlite3.Row
    finally:
        await store.close()


async def test_forget_with_a_reader_holding_a_snapshot_claims_nothing_early(
    tmp_path: Path,
) -> None:
    """While a reader holds an old snapshot, forget deletes the rows but `erased` stays
    False and the WAL still holds the marker; another chat's write completes promptly
    meanwhile; once the reader lets go, the background wipe leaves no byte of it."""
    path = tmp_path / "held.db"
    store = await SQLiteStore.open(path)
    try:
        for i in range(5):
            await store.begin_turn(
                InboxEntry(0, "whatsapp:1", f"m{i}", "whatsapp:1", "text", f"WIPE-ME-{i}", T0), 6
            )
        await store.begin_turn(
            InboxEntry(0, "whatsapp:2", "o0", "whatsapp:2", "text", "other", T0), 6
        )
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM inbox").fetchall()  # holds its snapshot
        started = asyncio.get_running_loop().time()
        assert await store.forget("whatsapp:1") >= 5
        assert not await store.erased(wait_s=0.2)
        assert b"WIPE-ME" in _files(path)
        await store.begin_turn(
            InboxEntry(0, "whatsapp:2", "o1", "whatsapp:2", "text", "still fast", T0), 6
        )
        assert asyncio.get_running_loop().time() - started < 2.0  # not the 5 s busy timeout
        reader.execute("ROLLBACK")
        reader.close()
        assert await store.erased(wait_s=5.0)
        assert b"WIPE-ME" not in _files(path)
        assert await store.inbox_get("whatsapp:2", "o1") is not None
    finally:
        await store.close()


def _files(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
