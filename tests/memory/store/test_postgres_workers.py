"""PostgreSQL across workers: two stores on one database behave as two `ventana run`
processes would (dedupe, per-chat order, fold compare-and-set, forget, debug; recall:
`tests/memory/recall`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from memory.store.episodes import NewEpisode
from memory.store.postgres.migrations import MIGRATIONS
from memory.store.postgres.store import PostgresStore
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.types import InboxEntry

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def pair(postgres_url: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    a = await PostgresStore.open(postgres_url, pool_size=3)
    b = await PostgresStore.open(postgres_url, pool_size=3)
    yield a, b
    await a.close()
    await b.close()


async def _exchange(store: PostgresStore, key: str, text: str, *, signal: bool = True) -> int:
    state = await store.turn_state(key, 3, T0)
    new = NewExchange(
        state.session_id,
        state.episode.id,
        text,
        f"re: {text}",
        signal,
        None if signal else "empty",
        T0,
    )
    return (await store.record_exchange(new)).id


async def test_migrations_are_recorded_and_idempotent(postgres_empty_url: str) -> None:
    """Two workers starting together on an empty database apply each migration once."""
    a, b = await asyncio.gather(
        PostgresStore.open(postgres_empty_url, pool_size=1),
        PostgresStore.open(postgres_empty_url, pool_size=1),
    )
    try:
        assert await a.applied_migrations() == [name for name, _ in MIGRATIONS]
        again = await PostgresStore.open(postgres_empty_url, pool_size=1)
        assert await again.applied_migrations() == await b.applied_migrations()
        await again.close()
    finally:
        await a.close()
        await b.close()


async def test_a_message_delivered_to_both_workers_is_taken_once(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """The inbox's unique constraint dedupes one delivery made to two workers at once."""
    a, b = pair
    for i in range(20):
        got = await asyncio.gather(
            a.inbox_add("whatsapp:1", f"wamid.{i}", "whatsapp:1", "text", "hola", T0),
            b.inbox_add("whatsapp:1", f"wamid.{i}", "whatsapp:1", "text", "hola", T0),
        )
        assert sum(1 for r in got if r is not None) == 1
    assert len(await a.inbox_unfinished()) == 20
    assert len(await a.sessions()) == 1


async def test_one_chat_is_held_by_one_worker_and_runs_in_arrival_order(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """While one worker holds a chat the other waits (other chats do not), then finds
    what is left of it, oldest first, without what the first already ran."""
    a, b = pair
    first = await a.inbox_add("whatsapp:2", "m1", "u", "text", "uno", T0)
    second = await b.inbox_add("whatsapp:2", "m2", "u", "text", "dos", T0)
    assert first is not None
    assert second is not None
    events: list[str] = []
    async with a.claim_turn(second) as claimed:
        assert [e.external_id for e in claimed.entries] == ["m1", "m2"]
        assert not claimed.exclusive
        waiting = asyncio.create_task(_claim(b, second, events))
        async with b.claim_turn(_entry("whatsapp:3", 10**9)):  # another chat: no waiting
            events.append("other chat")
        await asyncio.sleep(0.3)
        events.append("a done")
        await a.inbox_mark(first.id, "done", at=T0)
    assert await waiting == ["m2"]
    assert events == ["other chat", "a done", "b holds"]
    assert b.locks.waits >= 1
    assert a.locks.held == b.locks.held == 0


def _entry(key: str, entry_id: int) -> InboxEntry:
    return InboxEntry(entry_id, key, f"x{entry_id}", "u", "text", "", T0)


async def _claim(store: PostgresStore, entry: InboxEntry, events: list[str]) -> list[str]:
    async with store.claim_turn(entry) as claimed:
        events.append("b holds")
        return [e.external_id for e in claimed.entries]


async def test_a_cancelled_turn_releases_its_chat(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A turn cancelled while holding its chat lets the other worker in at once."""
    a, b = pair
    entered = asyncio.Event()

    async def hold() -> None:
        async with a.claim_turn(_entry("telegram:9", 1)):
            entered.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(hold())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with asyncio.timeout(2), b.claim_turn(_entry("telegram:9", 1)) as claimed:
        assert claimed.entries == ()


async def test_a_dead_workers_chat_locks_are_released(postgres_url: str) -> None:
    """A worker whose connection dies (kill -9) leaves no chat locked."""
    a = await PostgresStore.open(postgres_url, pool_size=1)
    b = await PostgresStore.open(postgres_url, pool_size=1)
    try:
        async with a.claim_turn(_entry("telegram:10", 1)):
            with psycopg.connect(postgres_url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = 'ventana-locks' AND pid IN"
                    " (SELECT pid FROM pg_locks WHERE locktype = 'advisory')"
                )
            async with asyncio.timeout(2), b.claim_turn(_entry("telegram:10", 1)):
                pass
    finally:
        await a.close()
        await b.close()


async def test_two_workers_folding_one_episode_write_one_version(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """Concurrent folds on the same base version: exactly one is written."""
    a, b = pair
    ids = [await _exchange(a, "console:f", f"m{i}") for i in range(4)]
    ep = (await a.turn_state("console:f", 1, T0)).episode.id

    def fold(text: str) -> NewSummary:
        return NewSummary(ep, 0, text, ids[2], "fold-v1", "offline", ids[0], ids[2], 1, 1, T0)

    for _ in range(5):
        results = await asyncio.gather(a.write_summary(fold("a")), b.write_summary(fold("b")))
        assert sum(1 for r in results if r is not None) <= 1
    assert [s.version for s in await b.summaries(ep)] == [1]


async def test_forget_on_one_worker_holds_on_the_other(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """After one worker forgets a key, the other sees nothing of it and its late fold
    writes nothing."""
    a, b = pair
    ids = [await _exchange(b, "telegram:7", f"m{i}") for i in range(3)]
    ep = (await b.turn_state("telegram:7", 1, T0)).episode.id
    assert await a.forget("telegram:7") >= 1
    late = NewSummary(ep, 0, "late", ids[1], "fold-v1", "offline", ids[0], ids[1], 1, 1, T0)
    assert await b.write_summary(late) is None
    assert await b.peek_state("telegram:7", 3) is None
    assert await b.export("telegram:7") == {
        "key": "telegram:7", "session": [], "episodes": [], "exchanges": [],
        "summaries": [], "inbox": [],
    }  # fmt: skip


async def test_debug_and_episodes_are_shared(pair: tuple[PostgresStore, PostgresStore]) -> None:
    """Debug switched on one worker makes the operator's next message on the other a dry
    run (and only the operator's); a reset on one is the other's current episode."""
    a, b = pair
    await a.set_debug("telegram:8", True, T0, "op")
    dry = await b.begin_turn(InboxEntry(0, "telegram:8", "m1", "op", "text", "hola", T0), 3)
    assert dry.debug
    assert dry.entry is None
    member = await b.begin_turn(InboxEntry(0, "telegram:8", "m2", "member", "text", "hola", T0), 3)
    assert not member.debug
    assert member.entry is not None
    state = await a.turn_state("telegram:8", 3, T0)
    fresh = await a.start_episode(NewEpisode(state.session_id, "manual", T0))
    assert (await b.turn_state("telegram:8", 3, T0)).episode.id == fresh.id


async def test_done_mark_is_committed_soon_and_awaited_by_close(postgres_url: str) -> None:
    """`inbox_delivered` commits in the background; close waits for it."""
    store = await PostgresStore.open(postgres_url, pool_size=2)
    entry = await store.inbox_add("console:d", "1", "u", "text", "x", T0)
    assert entry is not None
    store.inbox_delivered(entry.id, at=T0 + timedelta(seconds=1))
    await store.close()
    other = await PostgresStore.open(postgres_url, pool_size=1)
    assert await other.inbox_unfinished() == []
    await other.close()


async def test_cancelled_mid_query_rolls_back_and_the_pool_recovers(postgres_url: str) -> None:
    """A turn cancelled while the server runs its statement writes nothing, and the
    store (its pool) keeps working."""
    store = await PostgresStore.open(postgres_url, pool_size=1)
    try:
        await _exchange(store, "console:q", "uno")
        started = asyncio.Event()

        async def slow() -> None:
            async with store.transaction() as conn:
                await conn.execute("DELETE FROM exchanges")
                started.set()
                await conn.execute("SELECT pg_sleep(30)")

        task = asyncio.create_task(slow())
        await started.wait()
        await asyncio.sleep(0.2)  # inside pg_sleep now
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with asyncio.timeout(10):
            assert [e.user_text for e in await store.all_exchanges("console:q")] == ["uno"]
            await _exchange(store, "console:q", "dos")
        assert len(await store.all_exchanges("console:q")) == 2
    finally:
        await store.close()
