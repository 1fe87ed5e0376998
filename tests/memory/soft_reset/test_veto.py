"""The reset veto (`memory.soft_reset.revert.decide_veto`, `memory.soft_reset.turn.veto`):
a reset the topic check decides is not made when its own message names more of the case
it would close than facts of its own, says with a cue that the case goes on about one of
its terms, or refers back to one of them as already known ("lo de la fibra", "the router
thing") without an order of its own; a new subject, an idle reset and an episode with
nothing to close reset."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from memory.soft_reset.case import previous_case
from memory.soft_reset.revert import decide_veto
from memory.soft_reset.turn import VETOED, veto
from memory.store.sqlite.store import SQLiteStore
from memory.types import Exchange, TopicDecision, TurnState
from tests.memory.soft_reset.test_revert import CASE
from tests.support.engine import engine_for, turn

CASES = [
    # the reset's own message, expected reason (None: the reset is made)
    ("Buenos días, el ticket #4821 sigue abierto, ¿alguna novedad?", "shared_facts"),
    ("Os paso otra vez la IP del router: 192.168.1.1", "shared_facts"),
    ("Buenos días, sigo igual con el router", "continuation_cue"),
    ("Morning, the router still drops the fibre", "continuation_cue"),
    ("hola, me ha vuelto a pasar! el router no da conexion", "continuation_cue"),
    ("it happened again, the router dropped at 9", "continuation_cue"),
    # the user says it is the same subject, or refers back to something of the case
    ("otra cosa del mismo tema: la fibra me cobra el doble", "continuation_cue"),
    ("hola, me ha llegado la factura pero lo de la fibra no está descontado", "continuation_cue"),
    ("hi, the router thing: you charged me for the visit", "continuation_cue"),
    # ... about something the case never mentioned, or with an order of its own
    ("hola, lo de la tienda de Sevilla, ¿abre el sábado?", None),
    ("lo de la fibra ya está; ahora el pedido 7781 no llega", None),
    # the same words about something the case never mentioned
    ("me ha vuelto a pasar con la tienda de Sevilla", None),
    # a cue about something the case never mentioned: a new subject
    ("¿Todavía abre la tienda de Sevilla a las 10?", None),
    ("Quiero devolver unas zapatillas del pedido 7781", None),
    # more of its own facts than of the old case's
    ("Lo del ticket #4821 ya está; ahora el pedido 7781 y el 7790 no llegan", None),
    # a digit run shared with an old value is no mention of it on the reset's message
    ("Quiero anular el pedido 4821-550", None),
]


@pytest.mark.parametrize(("message", "expected"), CASES)
def test_the_veto_reads_the_resets_own_message(message: str, expected: str | None) -> None:
    found = decide_veto(message, CASE)
    assert (found.reason if found else None) == expected


def test_a_shared_order_prefix_is_not_the_old_order() -> None:
    """Two orders of one shop share their first digits: naming the second is a new case."""
    old = [Exchange(1, 1, "My order 112-4470913 never came", "I am checking 112-4470913.")]
    case = previous_case(1, old, old[-1].reply_text)
    new = "ok. something else, i want to cancel an order, 112-4491122"
    assert decide_veto(new, case) is None
    assert decide_veto("any news on 112-4470913?", case) is not None


def test_a_vetoed_reset_continues_and_says_what_it_suppressed() -> None:
    decision = TopicDecision("reset", "intent_changed", {"p": 0.9})
    vetoed = veto(decision, "El ticket #4821 sigue abierto", CASE)
    assert not vetoed.reset
    assert vetoed.reason == VETOED
    assert vetoed.signals["suppressed_reset"] == "intent_changed"
    assert vetoed.signals["reset_veto_shared"] == ["#4821"]
    assert vetoed.signals["p"] == 0.9
    assert veto(decision, "¿Tenéis aparcamiento?", CASE) is decision


def test_an_idle_reset_and_a_continue_pass_through() -> None:
    idle = TopicDecision("reset", "idle", {})
    assert veto(idle, "El ticket #4821 sigue abierto", CASE) is idle
    same = TopicDecision("continue", "same_case", {})
    assert veto(same, "El ticket #4821 sigue abierto", CASE) is same


async def reset_on_ticket(_state: TurnState, message: str, _now: datetime) -> TopicDecision:
    """A topic check that resets on every message mentioning a ticket (a bad detector)."""
    if "ticket" in message.lower():
        return TopicDecision("reset", "intent_changed", {})
    return TopicDecision("continue", "same")


@pytest.fixture
async def store() -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(":memory:")
    try:
        yield opened
    finally:
        await opened.close()


async def test_the_engine_keeps_the_episode_when_the_message_names_its_case(
    store: SQLiteStore,
) -> None:
    """A reset decided on a message naming the open case's ticket is not made: one
    episode, the case's facts still in the request; a new subject does reset."""
    engine, _ = engine_for(store, window=2, fold_batch=2, topic=reset_on_ticket)
    key = "console:veto"
    await turn(engine, key, "Hola, el router no conecta. Os abrí el caso 4821-A.")
    await turn(engine, key, "La IP del router es 192.168.1.1")
    before = (await store.turn_state(key, 2, engine.clock())).episode.id
    prepared = await engine.prepare(key, "¿Hay novedades del ticket 4821-A?")
    assert prepared.decision.reason == VETOED
    assert prepared.state.episode.id == before
    outcome = await engine.call(prepared)
    await engine.record(prepared, outcome, shown=("x",))
    sent = "\n".join(m.content for m in outcome.assembly.messages)
    assert "192.168.1.1" in sent
    prepared = await engine.prepare(key, "Otra cosa: quiero abrir un ticket por mi factura")
    assert prepared.decision.reset
    assert prepared.state.episode.id != before
