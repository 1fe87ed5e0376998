"""The state a turn's exchange leaves is kept for the chat's next intake (no state read)
and is what a fresh read gives; a write in between, here or from another connection,
makes the intake read it (SQLite, issue 29)."""

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
from memory.store.episodes import NewEpisode
from memory.store.sqlite.store import SQLiteStore
from memory.store.sqlite.turns import begin_turn
from memory.store.states import CARRIED, IntakeStates
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.types import Arrival, Episode, Exchange, TurnState

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
KEYS = ("telegram:71", "telegram:72")
ZONES = (UTC, timezone(timedelta(hours=-3)), timezone(timedelta(hours=5, minutes=30)))


@pytest.fixture(params=["file", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SQLiteStore]:
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


async def test_the_carried_state_is_a_fresh_read(store: SQLiteStore) -> None:
    """Random turns (signal and noise, windows 0 to 4, times in three zones) with folds,
    resets and debug switches between them: every state kept after an exchange equals
    a fresh read, and most turns read none of their own."""
    rng = random.Random(29)
    carried = 0
    for n in range(240):
        key, window = rng.choice(KEYS), rng.choice((0, 1, 2, 4, 4))
        at = (T0 + timedelta(minutes=n)).astimezone(rng.choice(ZONES))
        state = await _turn(store, key, n, window, rng.random() < 0.8, at)
        kept = store._states.kept(key, window)
        if kept is not None:
            carried += 1
            assert repr(kept) == repr(await store.peek_state(key, window))  # zones too
        roll = rng.random()
        now = await store.peek_state(key, window)
        assert now is not None
        if roll < 0.15 and now.pending:
            version = now.summary.version if now.summary else 0
            upto = rng.choice(now.pending).id
            fold = NewSummary(now.episode.id, version, f"s{n}", upto, "v", "m", 1, upto, 1, 1, at)
            await store.write_summary(fold)
        elif roll < 0.2:
            await store.start_episode(NewEpisode(state.session_id, "manual", at))
        elif roll < 0.23:
            await store.set_debug(key, True, at, "telegram:9")
            await store.set_debug(key, False, at, "telegram:9")
    assert carried > 150


async def test_an_intake_after_an_exchange_reads_no_state(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's next intake runs without its state read and the turn makes no read."""
    await _turn(store, KEYS[0], 0, 4, True, T0)
    units: list[dict[str, Any]] = []
    on_thread = connection._on_thread

    async def seeing(db: Any, fn: Any) -> Any:
        units.append({"fn": fn})
        if isinstance(fn, partial) and fn.func is connection._in_batch:
            units[-1]["batch"] = [u.keywords for u in fn.args[0] if u.func is begin_turn]
        return await on_thread(db, fn)

    monkeypatch.setattr(connection, "_on_thread", seeing)
    arrival = Arrival(KEYS[0], "m1", KEYS[0], "text", "otra", T0)
    intake = await store.begin_turn(arrival, 4)
    assert [u["batch"][0]["read"] for u in units] == [False]
    assert intake.state is not None
    assert len(intake.state.window) == 1
    assert await store.turn_state(KEYS[0], 4, T0) is intake.state
    assert len(units) == 1


async def test_a_write_before_the_exchange_is_not_carried(store: SQLiteStore) -> None:
    """A reset between the turn's state and its exchange: nothing is carried."""
    state = await _turn(store, KEYS[0], 0, 4, True, T0)
    state = await store.turn_state(KEYS[0], 4, T0)
    await store.start_episode(NewEpisode(state.session_id, "manual", T0))
    new = NewExchange(state.session_id, state.episode.id, "u", "r", True, None, T0)
    await store.record_exchange(new)
    assert store._states.kept(KEYS[0], 4) is None


async def test_a_write_in_the_intake_batch_makes_it_read(store: SQLiteStore) -> None:
    """A fold committed in the intake's own batch voids the carried state: the intake's
    state is read again (on the reader) and has the new summary."""
    for n in range(3):
        await _turn(store, KEYS[0], n, 1, True, T0)
    now = await store.peek_state(KEYS[0], 1)
    assert now is not None
    assert store._states.kept(KEYS[0], 1) is not None
    upto = now.pending[-1].id
    fold = NewSummary(now.episode.id, 0, "s", upto, "v", "m", 1, upto, 1, 1, T0)
    arrival = Arrival(KEYS[0], "m9", KEYS[0], "text", "otra", T0)
    _, intake = await asyncio.gather(store.write_summary(fold), store.begin_turn(arrival, 1))
    assert intake.state is not None
    assert intake.state.summary is not None
    assert intake.state == await store.peek_state(KEYS[0], 1)


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
