"""Two automatic resets in a row: the second, closing an episode the first opened (young
or not), carries the case before it on too, so a chain of wrong
resets never loses the case the user is still on, and a revert undoes one step."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory.soft_reset.case import MAX_FACTS, MAX_TERMS, chained
from memory.store.sqlite.store import SQLiteStore
from memory.types import PreviousCase
from tests.memory.test_carry_over import KEY, NEW, OLD, UNRELATED, case_of, engine_for, turn

SECOND = "Otra cosa: el router de casa da la IP 10.0.0.7 y no navega"


@pytest.fixture
async def store() -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(":memory:")
    yield opened
    await opened.close()


def test_the_chain_keeps_the_young_case_first_and_its_episode() -> None:
    """The young episode's facts and terms first, then the earlier case's not already
    there, within the caps; the episode a revert reopens and the last question stay the
    young one's."""
    young = PreviousCase(7, (("ip", "10.0.0.7"),), ("router",), "¿Reinició el router?")
    earlier = PreviousCase(3, (("id", "4471"), ("ip", "10.0.0.7")), ("pedid", "router"))
    both = chained(young, earlier)
    assert both == PreviousCase(
        7, (("ip", "10.0.0.7"), ("id", "4471")), ("router", "pedid"), "¿Reinició el router?"
    )
    worded = chained(young, PreviousCase(3, earlier.facts, (), "", ("- pedido 4471", "")))
    assert worded.words == ("", "- pedido 4471")  # each fact's words stay its own
    many = PreviousCase(1, tuple(("id", f"#{n}") for n in range(40)), tuple(map(str, range(99))))
    capped = chained(young, many)
    assert len(capped.facts) == MAX_FACTS
    assert len(capped.terms) == MAX_TERMS


async def test_a_second_reset_of_a_young_episode_carries_the_first_case_on(
    store: SQLiteStore,
) -> None:
    """Case A (order 4471, 45,90 €), a reset to a one-message episode B, a second reset
    to C: C's previous case holds A's facts after B's, and A's order rides in C's
    request; a message naming it reverts C into B, one step, not past it."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)  # B, opened by an automatic reset
    plan = await turn(engine, SECOND)  # C: B had folded nothing
    state = await store.turn_state(KEY, 2, engine.clock())
    previous = state.episode.previous
    assert previous is not None
    values = [value for _, value in previous.facts]
    assert "4471" in values
    assert any("45,90" in value for value in values)
    assert "4471" in case_of(plan)
    prepared = await engine.prepare(KEY, "¿Y el pedido 4471? sigue roto")
    assert prepared.decision.reason == "reset_reverted"
    assert prepared.decision.signals["reset_revert_reason"] == "shared_facts"
    episodes = await store.episodes(KEY)
    assert len(episodes) == 2  # C folded back into B; A stays closed behind it


async def test_a_wrong_reset_that_stood_still_carries_the_case_before_it(
    store: SQLiteStore,
) -> None:
    """Case A, a reset to B that stands long enough to fold (the user asked about opening
    hours for a while), a second reset to C: C's previous case still holds A's order
    after B's facts, so naming it reverts C into B, whose own block then holds A."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)  # B, opened by an automatic reset
    for text in UNRELATED:
        await turn(engine, text)
    folded = await store.turn_state(KEY, 2, engine.clock())
    assert folded.summary is not None  # B is no longer young
    await turn(engine, SECOND)  # C
    state = await store.turn_state(KEY, 2, engine.clock())
    previous = state.episode.previous
    assert previous is not None
    values = [value for _, value in previous.facts]
    assert "4471" in values  # A's, after B's own
    prepared = await engine.prepare(KEY, "¿Y el pedido 4471? sigue roto")
    assert prepared.decision.reason == "reset_reverted"
    assert len(await store.episodes(KEY)) == 2  # C folded back into B; A stays closed
