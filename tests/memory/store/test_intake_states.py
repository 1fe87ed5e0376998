"""The turn state read with an intake is the turn's own (no second read) while nothing
of its chat is written; any write to the chat since, here or in flight, voids it. On
every backend (`store` runs once per backend of `conftest.BACKENDS`). On SQLite the state
an exchange leaves is carried to the chat's next intake, which reads none, and equals a
fresh read (`sqlite_store`: a file and in memory)."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import memory.store.sqlite.connection as connection
from memory.store import Store
from memory.store.episodes import NewEpisode
from memory.store.sqlite.store import SQLiteStore
from memory.store.sqlite.turns import begin_turn
from memory.store.states import CARRIED, RECENT, IntakeStates
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.types import Arrival, Episode, Exchange, TurnState

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
KEY = "telegram:77"


async def _intake(store: Store, external_id: str, window: int = 6) -> TurnState:
    arrival = Arrival(KEY, external_id, "telegram:77", "text", "hola", T0)
    intake = await store.begin_turn(arrival, window)
    assert intake.state is not None
    return intake.state


async def _exchange(store: Store, state: TurnState, text: str) -> None:
    new = NewExchange(state.session_id, state.episode.id, text, "re", True, None, T0)
    await store.record_exchange(new)


async def test_the_intake_state_is_the_turn_state(store: Store) -> None:
    """Nothing written since the intake (the claim confirms it on a shared store): the
    turn's `turn_state` is the very state read with the intake, not a second read."""
    await _exchange(store, await store.turn_state(KEY, 6, T0), "antes")
    arrival = Arrival(KEY, "m1", "telegram:77", "text", "hola", T0)
    intake = await store.begin_turn(arrival, 6)
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


def test_a_void_is_found_among_many_and_forgotten_with_the_oldest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chat's own void is found behind other chats' writes, voids before the intake
    never count, and more voids than remembered keep nothing."""
    monkeypatch.setattr("memory.store.states.RECENT", 5)
    rng = random.Random(29)
    for _ in range(300):
        states, voids = IntakeStates(), []
        marks = [("void_key", KEY), ("void_session", 1), ("void_episode", 10)]
        marks += [("void_session", 2), ("void_key", "telegram:2"), ("void_episode", 11)]
        for name, arg in rng.choices(marks, k=rng.randrange(0, 12)):  # before the intake
            getattr(states, name)(arg)
        since = states.begin()
        for name, arg in rng.choices(marks, k=rng.randrange(0, 9)):
            getattr(states, name)(arg)
            voids.append(arg)
        own = {KEY, 1, 10}
        mine = any(arg in own for arg in voids)
        expected = len(voids) > 5 or mine  # more than remembered keeps nothing
        states.keep(since, 6, _state())
        assert (states.take(KEY, 6) is None) == expected, voids


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


# The state an exchange leaves, carried to the next intake (SQLite, issue 29).

KEYS = ("telegram:71", "telegram:72")
ZONES = (UTC, timezone(timedelta(hours=-3)), timezone(timedelta(hours=5, minutes=30)))


@pytest.fixture(params=["file", "memory"])
async def sqlite_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SQLiteStore]:
    target = tmp_path / "s.db" if request.param == "file" else ":memory:"
    opened = await SQLiteStore.open(target)
    yield opened
    await opened.close()


async def _turn(
    store: SQLiteStore, key: str, n: int, window: int, signal: bool, at: datetime
) -> TurnState:
    """One turn as the engine makes it: intake, turn state, exchange; each state checked
    against a fresh read."""
    intake = await store.begin_turn(Arrival(key, f"m{n}", key, "text", f"hola {n}", at), window)
    assert repr(intake.state) == repr(await store.peek_state(key, window))
    state = await store.turn_state(key, window, at)
    assert repr(state) == repr(await store.peek_state(key, window))
    reply = f"respuesta {n}" if signal or n % 2 else ""
    new = NewExchange(state.session_id, state.episode.id, f"u{n}", reply, signal, None, at)
    await store.record_exchange(new)
    return state


async def test_the_carried_state_is_a_fresh_read(sqlite_store: SQLiteStore) -> None:
    """Random turns (signal and noise, windows 0 to 4, times in three zones) with folds,
    resets and debug switches between them: every state kept after an exchange equals
    a fresh read, and most turns read none of their own."""
    rng = random.Random(29)
    carried = 0
    for n in range(240):
        key, window = rng.choice(KEYS), rng.choice((0, 1, 2, 4, 4))
        at = (T0 + timedelta(minutes=n)).astimezone(rng.choice(ZONES))
        state = await _turn(sqlite_store, key, n, window, rng.random() < 0.8, at)
        kept = sqlite_store._states.kept(key, window)
        if kept is not None:
            carried += 1
            assert repr(kept) == repr(await sqlite_store.peek_state(key, window))  # zones too
        roll = rng.random()
        now = await sqlite_store.peek_state(key, window)
        assert now is not None
        if roll < 0.15 and now.pending:
            version = now.summary.version if now.summary else 0
            upto = rng.choice(now.pending).id
            fold = NewSummary(now.episode.id, version, f"s{n}", upto, "v", "m", 1, upto, 1, 1, at)
            await sqlite_store.write_summary(fold)
        elif roll < 0.2:
            await sqlite_store.start_episode(NewEpisode(state.session_id, "manual", at))
        elif roll < 0.23:
            await sqlite_store.set_debug(key, True, at, "telegram:9")
            await sqlite_store.set_debug(key, False, at, "telegram:9")
    assert carried > 150


async def test_an_intake_after_an_exchange_reads_no_state(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's next intake runs without its state read and the turn makes no read."""
    await _turn(sqlite_store, KEYS[0], 0, 4, True, T0)
    units: list[dict[str, Any]] = []
    on_thread = connection._on_thread

    async def seeing(db: Any, fn: Any) -> Any:
        units.append({"fn": fn})
        if isinstance(fn, partial) and fn.func is connection._in_batch:
            units[-1]["batch"] = [u.keywords for u in fn.args[0] if u.func is begin_turn]
        return await on_thread(db, fn)

    monkeypatch.setattr(connection, "_on_thread", seeing)
    arrival = Arrival(KEYS[0], "m1", KEYS[0], "text", "otra", T0)
    intake = await sqlite_store.begin_turn(arrival, 4)
    assert [u["batch"][0]["read"] for u in units] == [False]
    assert intake.state is not None
    assert len(intake.state.window) == 1
    assert await sqlite_store.turn_state(KEYS[0], 4, T0) is intake.state
    assert len(units) == 1


async def test_a_write_before_the_exchange_is_not_carried(sqlite_store: SQLiteStore) -> None:
    """A reset between the turn's state and its exchange: nothing is carried."""
    state = await _turn(sqlite_store, KEYS[0], 0, 4, True, T0)
    state = await sqlite_store.turn_state(KEYS[0], 4, T0)
    await sqlite_store.start_episode(NewEpisode(state.session_id, "manual", T0))
    new = NewExchange(state.session_id, state.episode.id, "u", "r", True, None, T0)
    await sqlite_store.record_exchange(new)
    assert sqlite_store._states.kept(KEYS[0], 4) is None


async def test_a_write_in_the_intake_batch_makes_it_read(sqlite_store: SQLiteStore) -> None:
    """A fold committed in the intake's own batch voids the carried state: the intake's
    state is read again (on the reader) and has the new summary."""
    for n in range(3):
        await _turn(sqlite_store, KEYS[0], n, 1, True, T0)
    now = await sqlite_store.peek_state(KEYS[0], 1)
    assert now is not None
    assert sqlite_store._states.kept(KEYS[0], 1) is not None
    upto = now.pending[-1].id
    fold = NewSummary(now.episode.id, 0, "s", upto, "v", "m", 1, upto, 1, 1, T0)
    arrival = Arrival(KEYS[0], "m9", KEYS[0], "text", "otra", T0)
    _, intake = await asyncio.gather(
        sqlite_store.write_summary(fold), sqlite_store.begin_turn(arrival, 1)
    )
    assert intake.state is not None
    assert intake.state.summary is not None
    assert intake.state == await sqlite_store.peek_state(KEYS[0], 1)


async def test_another_connections_commit_makes_the_intake_read(tmp_path: Path) -> None:
    """A commit by another connection (a CLI beside the bot) between turns: the next
    intake does not use the carried state; its state has that commit."""
    store = await SQLiteStore.open(tmp_path / "s.db")
    try:
        await _turn(store, KEYS[0], 0, 4, True, T0)
        assert store._states.kept(KEYS[0], 4) is not None
        other = sqlite3.connect(tmp_path / "s.db")
        other.execute("UPDATE exchanges SET reply_text = 'cambiada'")
        other.commit()
        other.close()
        arrival = Arrival(KEYS[0], "m1", KEYS[0], "text", "otra", T0)
        intake = await store.begin_turn(arrival, 4)
        assert intake.state is not None
        assert intake.state.window[-1].reply_text == "cambiada"
        assert intake.state.last_reply == "cambiada"
    finally:
        await store.close()


def test_carried_states_are_bounded() -> None:
    """Past `CARRIED` kept states, carrying one lets the oldest go first."""
    states = IntakeStates()
    for n in range(CARRIED + 5):
        key = f"telegram:{n}"
        episode = Episode(n, n, T0)
        state = TurnState(n, key, False, episode, None, (), (), None, None)
        states.hand_out(states.begin(), 2, state)
        handed = states.handed(n)
        assert handed is not None
        states.void_session(n)
        states.carry(handed, Exchange(10_000 + n, n, "u", "r", True, None, T0))
    assert states.kept("telegram:0", 2) is None
    last = states.kept(f"telegram:{CARRIED + 4}", 2)
    assert last is not None
    assert [x.id for x in last.window] == [10_000 + CARRIED + 4]
    assert len(states._kept) == CARRIED
