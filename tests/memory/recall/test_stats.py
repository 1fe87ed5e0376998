"""A key's recall statistics kept in memory for the searches on disk
(`memory.recall.stats`): the vocabulary is read once per key and term, and what is kept
stays exact through new exchanges, a reset and its undo, a forget, a cancelled write, a
read racing a write, and a restart (learnt again from the database)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest

from memory.recall.hot import HotKeys
from memory.recall.port import RecallQuery
from memory.recall.stats import KeyStats
from memory.recall.terms import query_terms
from memory.store.episodes import NewEpisode
from memory.store.sqlite import recall_index
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from tests.memory.recall.test_index import MARKER, T0, filler, say, state_of

QUERIES = (f"la clave {MARKER} del router", "consulta de la cuenta", f"{MARKER} nueva cuenta")


async def _open(path: Path | str) -> tuple[SQLiteStore, list[str]]:
    """A store that holds no key in memory (every search reads FTS5), and the vocabulary
    queries its reader runs from now on."""
    store = await SQLiteStore.open(path)
    store.hot = HotKeys(max_terms=0)
    vocab: list[str] = []
    await store.db.reader.set_trace_callback(
        lambda sql: vocab.append(sql) if "recall_vocab" in sql else None
    )
    return store, vocab


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[SQLiteStore, list[str]]]:
    store, vocab = await _open(tmp_path / "s.db")
    yield store, vocab
    await store.close()


async def _exact(store: SQLiteStore, key: str, vocab: list[str]) -> int:
    """Every query of `QUERIES` gets from the store what a fresh read of the vocabulary
    gives (ids, scores, matched terms; that read is not counted in `vocab`); how many
    found something."""
    state = await state_of(store, key)
    found = 0
    for text in QUERIES:
        query = RecallQuery(state.session_id, state.episode.id, query_terms(text), 2**40)
        seen = len(vocab)
        fresh = await store.db.read(partial(recall_index.search, query=query))
        del vocab[seen:]
        mine = [(h.exchange.id, h.score, h.matched) for h in await store.recall(query)]
        assert mine == [(h.exchange.id, h.score, h.matched) for h in fresh], text
        found += bool(mine)
    return found


async def test_a_key_s_statistics_are_read_once_per_term(
    opened: tuple[SQLiteStore, list[str]],
) -> None:
    """The first search reads the vocabulary, the same search again reads nothing, and a
    search with one more term reads that term alone."""
    store, vocab = opened
    await say(store, "console:a", [f"la clave {MARKER} del router", *filler(20)])
    assert await _exact(store, "console:a", vocab) >= 2
    assert len(vocab) == 3  # the first query read the key's count too, the others their new terms
    vocab.clear()
    assert await _exact(store, "console:a", vocab) >= 2
    assert vocab == []
    state = await state_of(store, "console:a")
    await store.recall(
        RecallQuery(state.session_id, state.episode.id, query_terms("router módem"))
    )
    assert len(vocab) == 1
    assert vocab[0].split("IN (")[1].count(",") == 0  # one term: the new one


async def test_the_statistics_stay_exact_as_the_key_changes(
    opened: tuple[SQLiteStore, list[str]],
) -> None:
    """New exchanges, a reset, its undo and another key's writes keep what is kept exact,
    with no vocabulary read after the first."""
    store, vocab = opened
    await say(store, "console:e", [f"la clave {MARKER}", *filler(12)])
    await _exact(store, "console:e", vocab)
    vocab.clear()
    await say(store, "console:e", [f"otra {MARKER} nueva cuenta", *filler(4)])
    await say(store, "console:other", [f"la clave {MARKER} ajena", *filler(3)])
    assert await _exact(store, "console:e", vocab) >= 2
    state = await state_of(store, "console:e")
    await store.start_episode(NewEpisode(state.session_id, "manual", T0 + timedelta(hours=1)))
    await say(store, "console:e", [f"{MARKER} tras el reset", *filler(3)])
    await _exact(store, "console:e", vocab)
    assert await store.undo_reset(state.session_id, T0 + timedelta(hours=1), 3600)
    assert await _exact(store, "console:e", vocab) >= 2
    assert vocab == []


async def test_after_a_forget_nothing_kept_is_used() -> None:
    """After a forget the key's session id may be a new key's: what was kept of the old
    key is not used for it."""
    store, vocab = await _open(":memory:")  # no WAL wipe: nothing else clears what is kept
    try:
        await say(store, "console:f", [f"la clave {MARKER}", *filler(12)])
        await say(store, "console:g", [f"{MARKER} nueva cuenta", *filler(6)])
        await _exact(store, "console:f", vocab)
        await _exact(store, "console:g", vocab)
        g = (await state_of(store, "console:g")).session_id
        assert await store.forget("console:g")
        vocab.clear()
        await say(store, "console:h", [f"la clave {MARKER} del router", *filler(5)])
        assert (await state_of(store, "console:h")).session_id == g  # the id is given again
        assert await _exact(store, "console:h", vocab) >= 2
        assert await _exact(store, "console:f", vocab) >= 2
        assert vocab  # read afresh
    finally:
        await store.close()


async def test_a_restarted_store_learns_the_statistics_again(tmp_path: Path) -> None:
    """Nothing is read at start; a key's first search after it reads what it needs."""
    path = tmp_path / "s.db"
    store, vocab = await _open(path)
    try:
        await say(store, "console:f", [f"la clave {MARKER}", *filler(12)])
        await _exact(store, "console:f", vocab)
    finally:
        await store.close()
    store, vocab = await _open(path)
    try:
        await say(store, "console:f", filler(2))
        assert vocab == []
        assert await _exact(store, "console:f", vocab) >= 2
        assert vocab
    finally:
        await store.close()


async def test_a_cancelled_write_and_a_racing_read_keep_them_exact(
    opened: tuple[SQLiteStore, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write whose caller was cancelled commits all the same, and a search read while
    a write was on its way may or may not see it: neither is kept wrong."""
    import memory.store.sqlite.connection as connection

    store, vocab = opened
    await say(store, "console:c", [f"la clave {MARKER}", *filler(12)])
    await _exact(store, "console:c", vocab)
    state = await state_of(store, "console:c")
    on_thread, on_its_way, release = connection._on_thread, asyncio.Event(), asyncio.Event()

    async def holding(db: object, fn: object) -> object:
        if getattr(fn, "func", None) is connection._in_batch:
            on_its_way.set()
            await release.wait()
        return await on_thread(db, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(connection, "_on_thread", holding)
    new = NewExchange(state.session_id, state.episode.id, f"la clave {MARKER} nueva cuenta",
                      "ok", True, None, T0)  # fmt: skip
    task = asyncio.ensure_future(store.record_exchange(new))
    await on_its_way.wait()
    racing = RecallQuery(state.session_id, state.episode.id, query_terms("cuenta nueva"), 2**40)
    await store.recall(racing)  # read while the write is on its way: not learnt from
    task.cancel()
    release.set()
    await asyncio.gather(task, return_exceptions=True)
    if store.db._committer is not None:
        await asyncio.wait([store.db._committer])
    monkeypatch.setattr(connection, "_on_thread", on_thread)
    assert await _exact(store, "console:c", vocab) >= 1


def test_a_read_overlapping_a_write_is_not_learnt() -> None:
    """Begun while a write was in flight, or with a write committed before it lands: the
    read may hold that write or not, so it is not kept; a quiet one is."""
    stats = KeyStats()
    stats.writing(1)
    during = stats.lookup(1, ["a"])
    stats.added(1, ["a"])
    stats.learn(during, 5, {"a": 2})
    assert stats.lookup(1, ["a"]).missing == ("a",)
    before = stats.lookup(1, ["a"])
    stats.writing(1)
    stats.added(1, ["a"])
    stats.learn(before, 6, {"a": 3})
    quiet = stats.lookup(1, ["a"])
    assert quiet.missing == ("a",)
    stats.learn(quiet, 7, {})
    kept = stats.lookup(1, ["a", "b"])
    assert (kept.docs, kept.df, kept.missing) == (7, {"a": 0}, ("b",))
    stats.writing(1)
    stats.added(1, ["a", "a", "b"])
    kept = stats.lookup(1, ["a"])
    assert (kept.docs, kept.df, kept.missing) == (8, {"a": 1}, ())


def test_what_is_kept_is_bounded() -> None:
    """Past `max_terms` the least recently searched keys go."""
    stats = KeyStats(max_terms=10)
    for key in range(5):
        known = stats.lookup(key, ["a", "b", "c"])
        stats.learn(known, 1, {"a": 1})
    assert stats.size <= 10
    assert stats.lookup(4, ["a"]).missing == ()
    assert stats.lookup(0, ["a"]).missing == ("a",)
