"""The turn state read with an intake is the turn's own (no second read) while nothing
of its chat is written; any write to the chat since, here or in flight, voids it. On
every backend (`store` runs once per backend of `conftest.BACKENDS`)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from memory.store import Store
from memory.store.episodes import NewEpisode
from memory.store.sqlite.store import SQLiteStore
from memory.store.states import RECENT, IntakeStates
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.types import Episode, InboxEntry, TurnState

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
KEY = "telegram:77"


async def _intake(store: Store, external_id: str, window: int = 6) -> TurnState:
    draft = InboxEntry(0, KEY, external_id, "telegram:77", "text", "hola", T0)
    intake = await store.begin_turn(draft, window)
    assert intake.state is not None
    return intake.state


async def _exchange(store: Store, state: TurnState, text: str) -> None:
    new = NewExchange(state.session_id, state.episode.id, text, "re", True, None, T0)
    await store.record_exchange(new)


async def test_the_intake_state_is_the_turn_state(store: Store) -> None:
    """Nothing written since the intake (the claim confirms it on a shared store): the
    turn's `turn_state` is the very state read with the intake, not a second read."""
    await _exchange(store, await store.turn_state(KEY, 6, T0), "antes")
    draft = InboxEntry(0, KEY, "m1", "telegram:77", "text", "hola", T0)
    intake = await store.begin_turn(draft, 6)
    assert intake.entry is not None
    assert intake.state is not None
    async with store.claim_turn(intake.entry):
        assert await store.turn_state(KEY, 6, T0) is intake.state


async def test_an_exchange_recorded_after_the_intake_is_in_the_turn_state(store: Store) -> None:
    """An earlier message's exchange recorded after the later one's intake (one chat, two
    messages in flight) is in the later turn's state: nothing is lost (invariant 1)."""
    first = await _intake(store, "m1")
    await _intake(store, "m2")
    await _exchange(store, first, "la primera")
    state = await store.turn_state(KEY, 6, T0)
    assert [x.user_text for x in state.window] == ["la primera"]


@pytest.mark.parametrize("change", ["reset", "debug", "fold", "undo"])
async def test_a_change_after_the_intake_voids_its_state(store: Store, change: str) -> None:
    """A reset, a debug switch, a fold or an undo after the intake: the turn reads the
    state again and sees it."""
    state = await store.turn_state(KEY, 1, T0)
    for i in range(3):
        await _exchange(store, state, f"u{i}")
    if change == "undo":
        await store.start_episode(NewEpisode(state.session_id, "auto:topic", T0))
    await _intake(store, "m1", window=1)
    if change == "reset":
        await store.start_episode(NewEpisode(state.session_id, "manual", T0))
    elif change == "debug":
        await store.set_debug(KEY, True, T0, "telegram:1")
    elif change == "fold":
        now = await store.peek_state(KEY, 1)
        assert now is not None
        upto = now.pending[-1].id
        fold = NewSummary(state.episode.id, 0, "s", upto, "v", "m", 1, upto, 1, 1, T0)
        assert await store.write_summary(fold) is not None
    else:
        assert await store.undo_reset(state.session_id, T0 + timedelta(seconds=1), 60.0)
    assert await store.turn_state(KEY, 1, T0) == await store.peek_state(KEY, 1)


async def test_a_forget_after_the_intake_leaves_no_state(store: Store) -> None:
    """A forgotten key's state is not handed out: its next turn starts a new session."""
    await _exchange(store, await store.turn_state(KEY, 6, T0), "mi pedido")
    old = await _intake(store, "m1")
    assert old.window
    await store.forget(KEY)
    fresh = await store.turn_state(KEY, 6, T0)
    assert fresh.window == ()
    assert fresh == await store.peek_state(KEY, 6)


async def test_a_state_is_handed_out_once_and_for_its_window(store: Store) -> None:
    """Another window reads; a second `turn_state` reads (the state was the turn's)."""
    await _intake(store, "m1", window=6)
    assert await store.turn_state(KEY, 2, T0) == await store.peek_state(KEY, 2)
    await _intake(store, "m2", window=6)
    first = await store.turn_state(KEY, 6, T0)
    assert await store.turn_state(KEY, 6, T0) == first


async def test_a_sqlite_turn_reads_no_state_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On SQLite the intake's write unit read the state: the turn's `turn_state` makes no
    round trip to a connection's thread."""
    import memory.store.sqlite.connection as connection

    store = await SQLiteStore.open(":memory:")
    try:
        await _intake(store, "m1")
        trips: list[object] = []
        on_thread = connection._on_thread

        async def counting(db: object, fn: object) -> object:
            trips.append(fn)
            return await on_thread(db, fn)  # type: ignore[arg-type]

        monkeypatch.setattr(connection, "_on_thread", counting)
        await store.turn_state(KEY, 6, T0)
        assert trips == []
    finally:
        await store.close()


def _state(key: str = KEY, session: int = 1, episode: int = 10) -> TurnState:
    return TurnState(session, key, False, Episode(episode, session, T0), None, (), (), None, None)


def test_a_write_while_the_intake_is_in_flight_voids_it() -> None:
    """A write of the chat (by key, session or episode) between the intake's start and
    its return: the state it read may miss that write, so it is not kept."""
    for void in ("void_key", "void_session", "void_episode"):
        states = IntakeStates()
        since = states.begin()
        arg = {"void_key": KEY, "void_session": 1, "void_episode": 10}[void]
        getattr(states, void)(arg)
        states.keep(since, 6, _state())
        assert states.take(KEY, 6) is None


def test_writes_of_other_chats_meanwhile_keep_the_state() -> None:
    """Under load other chats write while an intake is in flight: its state is kept."""
    states = IntakeStates()
    since = states.begin()
    states.void_session(2)
    states.void_key("telegram:2")
    states.keep(since, 6, _state())
    assert states.take(KEY, 6) == _state()


def test_too_many_writes_or_a_clear_meanwhile_keep_nothing() -> None:
    """More writes than remembered, or another process's commit: nothing is kept."""
    states = IntakeStates()
    since = states.begin()
    for n in range(RECENT + 1):
        states.void_session(1000 + n)
    states.keep(since, 6, _state())
    assert states.take(KEY, 6) is None
    since = states.begin()
    states.clear()
    states.keep(since, 6, _state())
    assert states.take(KEY, 6) is None


async def test_concurrent_intakes_and_exchanges_never_hand_out_a_stale_state(
    store: Store,
) -> None:
    """Intakes of one chat racing its exchanges: each turn's state has every exchange
    recorded before it was asked for."""
    state = await store.turn_state(KEY, 50, T0)
    recorded: list[int] = []

    async def turn(n: int) -> None:
        await _intake(store, f"m{n}", window=50)
        for _ in range(n % 3):
            await asyncio.sleep(0)
        expected = len(recorded)
        got = await store.turn_state(KEY, 50, T0)
        assert len(got.window) >= expected
        await _exchange(store, state, f"u{n}")
        recorded.append(n)

    await asyncio.gather(*(turn(n) for n in range(8)))
