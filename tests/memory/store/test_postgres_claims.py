"""PostgreSQL claims and done marks: the state read with the intake is kept only while
it holds, and a done mark rides the chat locks' batches, not a pooled connection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import pq

from memory.store.episodes import NewEpisode
from memory.store.postgres.store import PostgresStore
from memory.store.turns import Intake, NewExchange
from memory.types import Arrival
from tests.memory.store.test_postgres_workers import pair

__all__ = ["pair"]  # the two-worker fixture

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
Change = Callable[[PostgresStore, str], Awaitable[object]]


async def _begin(store: PostgresStore, key: str, external_id: str) -> Intake:
    intake = await store.begin_turn(
        Arrival(key, external_id, "u", "text", f"hola {external_id}", T0), 3
    )
    assert intake.entry is not None
    assert intake.state is not None
    return intake


async def _record(store: PostgresStore, key: str) -> None:
    state = await store.turn_state(key, 3, T0)
    new = NewExchange(state.session_id, state.episode.id, "otro", "re", False, "empty", T0)
    await store.record_exchange(new)


async def _reset(store: PostgresStore, key: str) -> None:
    state = await store.turn_state(key, 3, T0)
    await store.start_episode(NewEpisode(state.session_id, "auto:topic", T0))


async def _debug(store: PostgresStore, key: str) -> None:
    await store.set_debug(key, True, T0, "telegram:9")


async def _forget(store: PostgresStore, key: str) -> None:
    await store.forget(key)


async def test_a_claim_confirms_the_intake_state_when_nothing_changed(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """Nothing written to the chat since its intake: the claim is exclusive (the state
    read with the intake is used, no second read)."""
    a, _ = pair
    await _record(a, "telegram:1")
    intake = await _begin(a, "telegram:1", "m1")
    assert intake.entry is not None
    async with a.claim_turn(intake.entry) as claim:
        assert [e.id for e in claim.entries] == [intake.entry.id]
        assert claim.exclusive


@pytest.mark.parametrize("change", [_record, _reset, _debug, _forget])
async def test_a_write_by_another_worker_since_the_intake_voids_its_state(
    pair: tuple[PostgresStore, PostgresStore], change: Change
) -> None:
    """Another worker's exchange, reset, debug switch or forget of the chat between the
    intake and the claim: the claim is not exclusive, so the state is read again."""
    a, b = pair
    await _record(a, "telegram:2")
    intake = await _begin(a, "telegram:2", "m1")
    assert intake.entry is not None
    await change(b, "telegram:2")
    async with a.claim_turn(intake.entry) as claim:
        assert not claim.exclusive


async def test_only_a_confirmed_intake_state_is_the_turn_state(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """The state read with an intake reaches its turn only through an exclusive claim:
    before the claim, or after one that found another worker's reset, it is read again."""
    a, b = pair
    await _record(a, "telegram:4")
    intake = await _begin(a, "telegram:4", "m1")
    assert intake.entry is not None
    await _reset(b, "telegram:4")
    async with a.claim_turn(intake.entry) as claim:
        assert not claim.exclusive
        state = await a.turn_state("telegram:4", 3, T0)
    assert state is not intake.state
    assert state == await a.peek_state("telegram:4", 3)
    assert intake.state is not None
    assert state.episode.id != intake.state.episode.id


async def test_a_claim_that_runs_an_earlier_entry_first_is_not_exclusive(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """An earlier entry of the chat (taken by another worker, unfinished) runs first: the
    later entry's intake state misses its exchange, so the claim is not exclusive."""
    a, b = pair
    earlier = await b.inbox_add("telegram:3", "m0", "u", "text", "antes", T0)
    intake = await _begin(a, "telegram:3", "m1")
    assert earlier is not None
    assert intake.entry is not None
    async with a.claim_turn(intake.entry) as claim:
        assert [e.id for e in claim.entries] == [earlier.id, intake.entry.id]
        assert not claim.exclusive


async def test_a_done_mark_asked_in_the_claim_lands_with_the_unlock(
    pair: tuple[PostgresStore, PostgresStore], postgres_url: str
) -> None:
    """Marked done while its chat is held, an entry reads done in the database as soon
    as the chat is released (the mark rode the unlock's round trip or an earlier one)."""
    a, _ = pair
    intake = await _begin(a, "telegram:4", "m1")
    assert intake.entry is not None
    async with a.claim_turn(intake.entry):
        a.inbox_delivered(intake.entry.id, at=T0 + timedelta(seconds=1))
    async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
        cur = await conn.execute("SELECT status FROM inbox WHERE id = %s", (intake.entry.id,))
        assert await cur.fetchone() == ("done",)


async def test_a_done_mark_needs_no_pooled_connection(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """With every pooled connection taken, a delivered entry is still marked done: the
    mark goes on the chat locks' connection."""
    a, b = pair
    entry = await a.inbox_add("telegram:5", "m1", "u", "text", "x", T0)
    assert entry is not None
    async with a.transaction(), a.transaction(), a.transaction():  # the pool (3), all taken
        a.inbox_delivered(entry.id, at=T0)
        async with asyncio.timeout(5):
            await a.inbox_settled()
    assert await b.inbox_unfinished() == []


async def test_a_turn_costs_the_lock_connection_two_statements(
    pair: tuple[PostgresStore, PostgresStore], tmp_path: Path
) -> None:
    """Holding a chat for a turn is one statement to take the lock and read the claim,
    and one to release it with the turn's done mark riding along (`sql.LANE`)."""
    a, _ = pair
    intake = await _begin(a, "telegram:6", "m1")
    assert intake.entry is not None
    conn = await a.locks._lane("telegram:6").connection()
    with (tmp_path / "trace").open("w+") as wire:
        conn.pgconn.trace(wire.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            async with a.claim_turn(intake.entry) as claim:
                assert claim.exclusive
                a.inbox_delivered(intake.entry.id, at=T0 + timedelta(seconds=1))
            await a.inbox_settled()
        finally:
            conn.pgconn.untrace()
        wire.seek(0)
        sent = [line.split("\t")[2] for line in wire.read().splitlines() if line[:1] == "F"]
    assert sent.count("Execute") == 2
    assert await a.inbox_unfinished() == []
