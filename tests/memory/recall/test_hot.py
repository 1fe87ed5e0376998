"""SQLite's recently searched keys, held in memory (`memory.recall.hot`): searched on
disk the first time while read in the background, then searched with no round trip, and
never stale: new exchanges, an undone reset, a forget, another connection's writes and
a read racing a write all keep it exact."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from bench.data.transcripts import long_support
from memory.recall.hot import HotKeys, Indexed, KeyIndex, Load
from memory.recall.port import RecallQuery
from memory.recall.terms import query_terms
from memory.store.episodes import NewEpisode
from memory.store.sqlite import recall_index
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from memory.types import Exchange
from tests.memory.recall.test_index import MARKER, T0, filler, say, search, state_of


async def held(store: SQLiteStore, key: str, text: str) -> list[int]:
    """`search`, then the key's read into memory finished."""
    found = await search(store, key, text)
    await store.recall_held()
    return found


@pytest.fixture
async def store(tmp_path: Path) -> SQLiteStore:
    opened = await SQLiteStore.open(tmp_path / "h.db")
    yield opened  # type: ignore[misc]
    await opened.close()


async def test_a_key_is_read_once_then_searched_without_a_round_trip(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = await say(store, "console:a", [f"la clave {MARKER} del router", *filler(20)])
    assert await held(store, "console:a", f"clave {MARKER}") == [ids[0]]  # on disk
    assert store.hot.loads == 1
    assert len(store.hot) == 1
    state = await state_of(store, "console:a")
    reads: list[object] = []
    real_read = store.db.read

    async def counting(fn: object) -> object:
        reads.append(fn)
        return await real_read(fn)  # type: ignore[arg-type]

    monkeypatch.setattr(store.db, "read", counting)
    query = RecallQuery(state.session_id, state.episode.id, query_terms(f"router {MARKER}"))
    hits = await store.recall(query)
    assert [h.exchange.id for h in hits] == [ids[0]]
    assert reads == []  # no round trip to the reader
    assert store.hot.loads == 1


async def test_exchanges_recorded_after_the_read_are_found(store: SQLiteStore) -> None:
    await say(store, "console:n", filler(20))
    assert await held(store, "console:n", f"clave {MARKER}") == []
    [late] = await say(store, "console:n", [f"la clave {MARKER} nueva"])
    assert await search(store, "console:n", f"clave {MARKER}") == [late]
    assert store.hot.loads == 1


async def test_memory_and_disk_give_the_same_hits(tmp_path: Path) -> None:
    """A support case of 60 exchanges: every query gets the same ids and scores from the
    held key as from FTS5 (fewer matches than the candidates re-ranked, so the same)."""
    store = await SQLiteStore.open(tmp_path / "same.db")
    try:
        case = long_support(60)
        await say(store, "telegram:5", [turn.user for turn in case])
        state = await state_of(store, "telegram:5")
        await held(store, "telegram:5", case[0].user)
        assert len(store.hot) == 1
        db = sqlite3.connect(tmp_path / "same.db")
        try:
            compared = 0
            for turn in case[::3]:
                query = RecallQuery(
                    state.session_id, state.episode.id, query_terms(turn.user), 2**40, 8
                )
                disk = recall_index.search(db, query)
                on_disk = [(h.exchange.id, h.score, h.matched) for h in disk]
                mine = [(h.exchange.id, h.score, h.matched) for h in await store.recall(query)]
                assert mine == on_disk
                compared += bool(mine)
            assert compared >= 10  # most queries find something: the test compares hits
        finally:
            db.close()
        assert store.hot.loads == 1
    finally:
        await store.close()


async def test_an_exchange_whose_caller_was_cancelled_is_still_found(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write of a cancelled caller commits whole (the group-commit writer): the key
    held in memory must not miss it."""
    import memory.store.sqlite.connection as connection

    await say(store, "console:c", filler(20))
    assert await held(store, "console:c", f"clave {MARKER}") == []
    state = await state_of(store, "console:c")
    on_thread, on_its_way, release = connection._on_thread, asyncio.Event(), asyncio.Event()

    async def holding(db: object, fn: object) -> object:
        if getattr(fn, "func", None) is connection._in_batch:
            on_its_way.set()
            await release.wait()
        return await on_thread(db, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(connection, "_on_thread", holding)
    new = NewExchange(state.session_id, state.episode.id, f"la clave {MARKER}", "ok", True,
                      None, T0)  # fmt: skip
    task = asyncio.ensure_future(store.record_exchange(new))
    await on_its_way.wait()
    task.cancel()
    release.set()
    await asyncio.gather(task, return_exceptions=True)
    if store.db._committer is not None:
        await asyncio.wait([store.db._committer])
    [late] = [ex.id for ex in await store.all_exchanges("console:c") if MARKER in ex.user_text]
    assert await held(store, "console:c", f"clave {MARKER}") == [late]
    assert await search(store, "console:c", f"clave {MARKER}") == [late]


async def test_an_undone_reset_is_read_again(store: SQLiteStore) -> None:
    ids = await say(store, "console:u", [f"el pin {MARKER} es 4471", *filler(10)])
    state = await state_of(store, "console:u")
    await store.start_episode(NewEpisode(state.session_id, "manual", T0 + timedelta(hours=1)))
    after = await say(store, "console:u", ["repito el pin 4471", *filler(3)])
    assert await held(store, "console:u", "¿el pin 4471?") == [after[0]]
    assert await search(store, "console:u", "¿el pin 4471?") == [after[0]]  # from memory
    assert await store.undo_reset(state.session_id, T0 + timedelta(hours=1), 3600)
    assert len(store.hot) == 0
    found = await held(store, "console:u", "¿el pin 4471?")
    assert sorted(found) == [ids[0], after[0]]  # both episodes' exchanges, one again
    assert sorted(await search(store, "console:u", "¿el pin 4471?")) == [ids[0], after[0]]
    assert store.hot.loads == 2


async def test_a_forgotten_key_is_not_recalled_under_its_reused_ids(store: SQLiteStore) -> None:
    """SQLite gives a forgotten key's session and episode ids to the next new key: what
    was held for the forgotten one must not answer for it."""
    await say(store, "telegram:1", filler(10))
    await say(store, "telegram:2", [f"mi clave {MARKER} secreta", *filler(10)])
    assert await held(store, "telegram:2", f"clave {MARKER}") != []
    assert len(store.hot) == 1
    gone = await state_of(store, "telegram:2")
    await store.forget("telegram:2")
    assert len(store.hot) == 0
    await say(store, "telegram:3", filler(10))
    reused = await state_of(store, "telegram:3")
    assert (reused.session_id, reused.episode.id) == (gone.session_id, gone.episode.id)
    assert await search(store, "telegram:3", f"clave {MARKER}") == []


async def test_another_connection_writing_clears_what_is_held(tmp_path: Path) -> None:
    """A write by another connection (a CLI beside the bot) is seen at this store's next
    write batch (SQLite's `data_version`): nothing held is trusted after it."""
    path = tmp_path / "two.db"
    bot, cli = await SQLiteStore.open(path), await SQLiteStore.open(path)
    try:
        await say(bot, "console:x", filler(20))
        assert await held(bot, "console:x", f"clave {MARKER}") == []
        assert len(bot.hot) == 1
        [theirs] = await say(cli, "console:x", [f"la clave {MARKER} de fuera"])
        await say(bot, "console:y", filler(1))  # any write of the bot's own
        assert len(bot.hot) == 0
        assert await held(bot, "console:x", f"clave {MARKER}") == [theirs]
        assert await search(bot, "console:x", f"clave {MARKER}") == [theirs]  # memory
        assert bot.hot.loads == 2
    finally:
        await cli.close()
        await bot.close()


async def test_a_key_read_in_batches_with_a_write_between_them_is_exact(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read 5 exchanges a round trip; an exchange committed between two of them is in
    the result once, and the statistics equal a read of the whole key at once."""
    monkeypatch.setattr(recall_index, "LOAD_BATCH", 5)
    await say(store, "console:b", [f"tema {n} del router" for n in range(22)])
    rounds, real_read = [], store.db.read

    async def reading(fn: object) -> object:
        if getattr(fn, "func", None) is recall_index.load_key:
            rounds.append(fn)
            if len(rounds) == 2:
                await say(store, "console:b", [f"la clave {MARKER} llega"])
        return await real_read(fn)  # type: ignore[arg-type]

    monkeypatch.setattr(store.db, "read", reading)
    await held(store, "console:b", "router")
    state = await state_of(store, "console:b")
    assert len(rounds) == 6  # 23 exchanges: 5 a round, and the round that finds none
    whole = KeyIndex(state.session_id, state.episode.id)
    db = sqlite3.connect(tmp_path / "h.db")
    try:
        recall_index.load_key(db, whole, limit=1000)
    finally:
        db.close()
    mine = store.hot._keys[state.session_id]
    assert (mine.docs, mine.df, mine.terms, mine.postings) == (
        whole.docs, whole.df, whole.terms, whole.postings
    )  # fmt: skip
    assert mine.docs == 23


async def test_a_burst_of_first_searches_reads_few_keys_at_a_time(store: SQLiteStore) -> None:
    """After a restart every chat's first search misses: at most `HOLDING_AT_ONCE` keys
    are read at a time (the reader's thread serves the turns too); the others are read
    at a later search."""
    from memory.store.sqlite.recall import HOLDING_AT_ONCE

    keys = [f"console:k{n}" for n in range(6)]
    for key in keys:
        await say(store, key, [f"la clave {MARKER} de {key}", *filler(5)])
    states = [await state_of(store, key) for key in keys]
    queries = [
        RecallQuery(s.session_id, s.episode.id, query_terms(f"clave {MARKER}")) for s in states
    ]
    found = await asyncio.gather(*(store.recall(q) for q in queries))
    assert all(len(hits) == 1 for hits in found)  # each on disk meanwhile
    assert store.hot.loads == HOLDING_AT_ONCE < len(keys)
    for _ in keys:  # later searches read the rest
        await store.recall_held()
        await asyncio.gather(*(store.recall(q) for q in queries))
    await store.recall_held()
    assert len(store.hot) == len(keys)


async def test_a_key_too_large_to_hold_is_searched_on_disk(store: SQLiteStore) -> None:
    store.hot = HotKeys(max_terms=200)  # a key over 100 terms is never held
    ids = await say(store, "console:big", [f"la clave {MARKER} grande", *filler(30)])
    for _ in range(2):
        assert await held(store, "console:big", f"clave {MARKER}") == [ids[0]]
    assert store.hot.too_big((await state_of(store, "console:big")).session_id)
    assert len(store.hot) == 0
    assert store.hot.loads == 1


# -- the pure part ---------------------------------------------------------------------


def build(session_id: int, episode_id: int, items: list[Indexed]) -> KeyIndex:
    """A key's index from its indexed exchanges (every episode), in id order."""
    index = KeyIndex(session_id, episode_id)
    for each in sorted(items, key=lambda i: i.exchange.id):
        index.add(each)
    return index


def item(exchange_id: int, words: str, episode: int = 1) -> Indexed:
    ex = Exchange(exchange_id, episode, words, "", True, None, T0)
    return Indexed(ex, tuple(words.split()))


def index_of(session_id: int, n: int, words: str = "uno dos tres") -> KeyIndex:
    return build(session_id, 1, [item(i, f"{words} w{i}") for i in range(1, n + 1)])


def test_statistics_count_every_episode_and_postings_only_the_current_one() -> None:
    index = build(1, 2, [item(1, "router router caido", 1), item(2, "router router nuevo", 2)])
    assert (index.docs, index.df["router"], index.df["caido"]) == (2, 2, 1)
    assert index.postings == {"router": ([2], bytearray([2])), "nuevo": ([2], bytearray([1]))}
    index.add(item(2, "router router nuevo", 2))  # the same exchange again: counted once
    assert (index.docs, index.df["router"]) == (2, 2)


def test_a_read_gets_what_was_committed_meanwhile_and_a_changed_key_is_discarded() -> None:
    hot = HotKeys()
    load = hot.begin_load(7)
    hot.add(7, item(3, "uno dos tres w3"))  # committed while the read was under way...
    hot.add(7, item(99, "nueva palabra"))
    assert hot.keep(load, index_of(7, 3))  # ...the read had the first, not the second
    index = hot._keys[7]
    assert (index.docs, index.df["uno"], index.df["nueva"]) == (4, 3, 1)
    assert sorted(index.entries) == [1, 2, 3, 99]
    moved = hot.begin_load(7)
    hot.drop(7)  # an undone reset while it was read
    assert not hot.keep(moved, index_of(7, 3))
    assert len(hot) == 0
    failed = hot.begin_load(8)
    hot.abandon(failed)  # a read that raised
    hot.clear()
    assert isinstance(failed, Load)
    assert not failed.stale
    assert hot._loads == {}


def test_the_least_recently_searched_keys_go_first_within_the_bound() -> None:
    hot = HotKeys(max_terms=60)  # each key below: 3 × 4 = 12 terms, 6 distinct: 18
    for sid in (1, 2, 3):
        assert hot.keep(hot.begin_load(sid), index_of(sid, 3))
    assert hot.search(RecallQuery(1, 1, ())) is not None  # key 1 is now the most recent
    assert hot.keep(hot.begin_load(4), index_of(4, 3))
    held = [sid for sid in (1, 2, 3, 4) if hot.search(RecallQuery(sid, 1, ())) is not None]
    assert held == [1, 3, 4]
    assert hot.size == 54
    assert not hot.keep(hot.begin_load(5), index_of(5, 6))  # 24 + 9 = 33: over half
    assert hot.too_big(5)
    assert not hot.too_big(4)


def test_past_episodes_count_in_the_bound() -> None:
    """A key's statistics cover its past episodes too: their distinct terms are held."""
    old = [item(i, f"palabra{i} otra{i}", episode=1) for i in range(1, 21)]
    index = build(1, 2, [*old, item(21, "nueva", episode=2)])
    assert (index.terms, len(index.df), index.size) == (1, 41, 42)


def test_another_episode_is_not_answered_from_memory() -> None:
    hot = HotKeys()
    hot.keep(hot.begin_load(1), index_of(1, 3))
    assert hot.search(RecallQuery(1, 2, ())) is None
    hot.add(1, item(10, "otra cosa", episode=2))  # the key's new episode: read afresh
    assert len(hot) == 0
