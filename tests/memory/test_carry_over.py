"""Carry-over (invariant 6, with the soft reset): after an automatic reset the user's
identity facts ride in one labelled block, and the closed case's facts in another while
the new episode refers to them or is only a few messages old; after a reset that stands
and is not referred back to, only the identity block reaches the model from earlier
episodes. `/reset`, `none` and `/forget` carry nothing; `/undo` and a revert bring the
old episode back and drop both blocks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest

from memory.blocks import CARRY_OVER_TAG, CASE_TAG
from memory.carry_over import carried, carry_over_block
from memory.engine import MemoryEngine
from memory.policy import Assembly
from memory.store.sqlite.store import SQLiteStore
from memory.types import Exchange, TopicDecision, TurnState
from tests.support.engine import engine_for as engine_with
from tests.support.engine import turn as turn_of

KEY = "console:carry"
OLD = [
    "Hola, soy Ana García. Mi correo es ana@example.com.",
    "El pedido 4471 llegó con la pantalla rota.",
    "Quiero que me devolváis los 45,90 euros.",
]
NEW = "Otra cosa: ¿abrís el sábado por la tarde?"
SECRET_BITS = ("4471", "pantalla", "45,90", "devolváis")
CASE_FACTS = ("4471", "45,90")  # the closed case's hard facts
# Its words away from any fact, which never ride in a block (those next to a fact ride
# with it, quoted as the user's: "«pedido 4471 llegó con la pantalla rota»").
CONVERSATION = ("Quiero", "Hola")
UNRELATED = ["¿Y el domingo?", "¿Tenéis aparcamiento?", "¿Aceptáis tarjeta?", "¿Y en agosto?"]


async def reset_on_otra(_state: TurnState, message: str, _now: datetime) -> TopicDecision:
    """A topic check that resets exactly when the message starts with "Otra cosa"."""
    if message.startswith("Otra cosa"):
        return TopicDecision("reset", "topic", {"cue": "otra cosa"})
    return TopicDecision("continue", "same")


def engine_for(store: SQLiteStore, carry: str = "identity") -> MemoryEngine:
    engine, _ = engine_with(store, window=2, fold_batch=2, reset_carry=carry, topic=reset_on_otra)
    return engine


async def turn(engine: MemoryEngine, text: str) -> Assembly:
    return await turn_of(engine, KEY, text)


def sent_text(plan: Assembly) -> str:
    return plan.system + "\n" + "\n".join(m.content for m in plan.messages)


@pytest.fixture
async def store() -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(":memory:")
    yield opened
    await opened.close()


def test_only_identity_facts_from_the_users_words_are_carried() -> None:
    """Name and email come along; the order id, amount and the assistant's name do not."""
    exchanges = [
        Exchange(1, 1, OLD[0], "Hola Ana, soy Marta, de soporte."),
        Exchange(2, 1, OLD[1], "Lo siento."),
    ]
    pairs = carried(exchanges)
    assert ("name", "Ana García") in pairs
    assert ("email", "ana@example.com") in pairs
    assert all("4471" not in v and "Marta" not in v for _, v in pairs)
    chained = carried([Exchange(5, 2, "Mi teléfono es 612 345 678.", "ok")], pairs)
    assert ("email", "ana@example.com") in chained  # an earlier episode's facts still count


def test_the_block_is_labelled_and_empty_without_facts() -> None:
    """The block says where the facts come from and that they may be out of date."""
    block = carry_over_block((("name", "Ana"),), "en")
    assert block.startswith(f"<{CARRY_OVER_TAG}>\nabout this user, from earlier conversations")
    assert "may be out of date" in block
    assert "- name: Ana" in block
    assert carry_over_block((), "es") == ""


def case_of(plan: Assembly) -> str:
    """The request's previous-case block, or ""."""
    start = plan.system.find(f"<{CASE_TAG}>")
    return "" if start < 0 else plan.system[start : plan.system.index(f"</{CASE_TAG}>") + 16]


async def test_after_an_automatic_reset_the_closed_case_rides_in_its_own_block(
    store: SQLiteStore,
) -> None:
    """Right after the reset: the identity block, and the closed case's facts in their
    own labelled block in the words they were given; nothing else of the old
    conversation, no summary, no window."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    plan = await turn(engine, NEW)
    sent, case = sent_text(plan), case_of(plan)
    assert f"<{CARRY_OVER_TAG}>" in plan.system
    assert "ana@example.com" in plan.system
    assert all(fact in case for fact in CASE_FACTS)
    assert "may be unrelated" in case or "puede no tener relación" in case
    assert not any(bit in sent.replace(case, "") for bit in SECRET_BITS)
    assert not any(word in sent for word in CONVERSATION)
    assert "«pedido 4471 llegó con la pantalla rota»" in case
    assert plan.summary is None
    assert plan.window == ()
    assert plan.recall.hits == ()
    assert plan.tokens["carry_over"] > 0
    assert plan.tokens["total"] == sum(v for k, v in plan.tokens.items() if k != "total")
    later = await turn(engine, "¿Y el domingo?")
    assert "ana@example.com" in later.system  # stable across the episode's turns


async def test_after_a_reset_that_stands_only_the_identity_block_stays(store: SQLiteStore) -> None:
    """Invariant 6 with the soft reset: once the revert window is over and the new episode
    does not refer to the closed case, no earlier-episode content reaches the model but
    the identity carry-over (the case facts are gone from the request)."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)
    plans = [await turn(engine, text) for text in UNRELATED]
    assert all(fact in plans[0].system for fact in CASE_FACTS)  # still within the window
    last = await turn(engine, "¿Y los festivos?")
    sent = sent_text(last)
    assert f"<{CASE_TAG}" not in last.system
    assert not any(bit in sent for bit in SECRET_BITS)
    assert all(hit.exchange.episode_id == last.window[0].episode_id for hit in last.recall.hits)
    assert "ana@example.com" in last.system
    assert len(await store.episodes(KEY)) == 2  # the reset stood


async def past_the_revert_window(store: SQLiteStore) -> MemoryEngine:
    """The old case, a reset, and five unrelated messages: a reset that stood."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)
    for text in [*UNRELATED, "¿Y los festivos?"]:
        await turn(engine, text)
    return engine


async def test_a_new_episode_that_refers_back_brings_the_case_facts_again(
    store: SQLiteStore,
) -> None:
    """After the revert window, a message naming one of the closed case's facts brings
    the case block back (and recall searches the closed episode); the reset stands."""
    engine = await past_the_revert_window(store)
    plan = await turn(engine, "Por cierto, ¿cuándo me devolvéis los 45,90 euros?")
    assert "4471" in case_of(plan)
    assert any(hit.previous for hit in plan.recall.hits)
    assert "devolváis" in plan.recall.text  # the closed episode's exchange, recalled
    assert len(await store.episodes(KEY)) == 2


async def test_a_reset_that_stood_reverts_when_the_user_names_the_case_again(
    store: SQLiteStore,
) -> None:
    """Well past the revert window, a message naming the closed case's order said whole
    undoes the reset that stood: one episode again, the old case's exchanges in the
    request (an amount, above, only brings the case's block back)."""
    engine = await past_the_revert_window(store)
    prepared = await engine.prepare(KEY, "Vuelvo con lo del pedido 4471, ¿alguna novedad?")
    assert prepared.decision.reason == "reset_reverted"
    assert prepared.decision.signals["reset_revert_shared"] == ["4471"]
    assert isinstance(prepared.plan, Assembly)
    assert "pantalla" in sent_text(prepared.plan)
    assert len(await store.episodes(KEY)) == 1


async def test_a_reset_that_stood_reverts_when_the_bot_names_the_case(store: SQLiteStore) -> None:
    """Well past the revert window, the bot's reply naming the closed case's order said
    whole undoes the reset on the next message, however plain ("Gracias")."""
    engine, model = engine_with(store, window=2, fold_batch=2, topic=reset_on_otra)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)
    for text in UNRELATED:
        await turn(engine, text)
    model.replies["¿Y los festivos?"] = "Abrimos. Y el pedido 4471 sale mañana, por cierto."
    await turn(engine, "¿Y los festivos?")
    prepared = await engine.prepare(KEY, "Gracias")
    assert prepared.decision.reason == "reset_reverted"
    assert prepared.decision.signals["reset_revert_reason"] == "reply_names_case"
    assert len(await store.episodes(KEY)) == 1


async def test_a_false_reset_reverts_when_the_next_message_shares_a_fact(
    store: SQLiteStore,
) -> None:
    """The order number of the closed case in the next message: the reset reverts before
    the context is built, and the old case's exchanges are in that turn's request."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)
    prepared = await engine.prepare(KEY, "Otra cosa: el pedido 4471 sigue sin llegar")
    decision = prepared.decision
    assert decision.reason == "reset_reverted"
    assert decision.signals["reset_revert_reason"] == "shared_facts"
    assert not decision.reset  # the same message does not reset again
    plan = prepared.plan
    assert isinstance(plan, Assembly)
    sent = sent_text(plan)
    assert "45,90" in sent
    assert "pantalla" in sent
    assert f"<{CASE_TAG}" not in plan.system
    assert f"<{CARRY_OVER_TAG}" not in plan.system
    episodes = await store.episodes(KEY)
    assert len(episodes) == 1
    assert episodes[0].reopened_at is not None  # as after /undo (respect_undo applies)


async def test_the_carry_over_sits_between_memory_and_recall(store: SQLiteStore) -> None:
    """Assembly order: prompt, memory block, carry-over block, recall block."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    for text in (NEW, "Necesito la factura 7788 de marzo", "Gracias", "Vale", "Perfecto"):
        await turn(engine, text)
    plan = await turn(engine, "¿Qué pasó con la factura 7788?")
    system = plan.system
    assert system.index("<memory") < system.index(f"<{CARRY_OVER_TAG}") < system.index("<recall")


async def test_manual_reset_carries_nothing(store: SQLiteStore) -> None:
    """`/reset` is a clean slate: no carry-over block, no earlier content, and it never
    reverts, whatever the next message says."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await engine.episodes.reset(KEY)
    plan = await turn(engine, "¿Abrís el sábado?")
    assert f"<{CARRY_OVER_TAG}" not in plan.system
    assert "Ana" not in sent_text(plan)
    again = await turn(engine, "Sigo igual con el pedido 4471 y los 45,90 euros")
    assert f"<{CASE_TAG}" not in again.system
    assert "pantalla" not in sent_text(again)
    assert len(await store.episodes(KEY)) == 2


async def test_none_carries_nothing(store: SQLiteStore) -> None:
    """With `VENTANA_RESET_CARRY=none` an automatic reset is a clean slate too."""
    engine = engine_for(store, carry="none")
    for text in OLD:
        await turn(engine, text)
    plan = await turn(engine, NEW)
    assert f"<{CARRY_OVER_TAG}" not in plan.system
    assert f"<{CASE_TAG}" not in plan.system
    assert "Ana" not in sent_text(plan)
    assert not any(bit in sent_text(plan) for bit in SECRET_BITS)


async def test_undo_restores_the_episode_and_drops_the_carry_over(store: SQLiteStore) -> None:
    """`/undo` after an automatic reset: the old window is back, the block is gone."""
    engine = engine_for(store)
    for text in OLD:
        await turn(engine, text)
    await turn(engine, NEW)
    assert await engine.episodes.undo(KEY) is not None
    plan = await turn(engine, "Sigo con lo del pedido")
    assert f"<{CARRY_OVER_TAG}" not in plan.system
    assert f"<{CASE_TAG}" not in plan.system
    assert "45,90" in sent_text(plan)  # the previous episode's last exchange is back


async def test_the_carry_over_survives_a_restart(tmp_path: Path) -> None:
    """Stored with the episode: a reopened database gives the same block."""
    path = tmp_path / "v.db"
    store = await SQLiteStore.open(path)
    engine = engine_for(store)
    for text in [*OLD, NEW]:
        await turn(engine, text)
    await store.close()
    again = await SQLiteStore.open(path)
    try:
        plan = await turn(engine_for(again), "¿Y el domingo?")
        assert "ana@example.com" in plan.system
    finally:
        await again.close()


async def test_forget_erases_the_carry_over(tmp_path: Path) -> None:
    """After `/forget` no byte of the carried facts is left in the database files."""
    path = tmp_path / "v.db"
    store = await SQLiteStore.open(path)
    try:
        engine = engine_for(store)
        for text in [*OLD, NEW]:
            await turn(engine, text)
        await engine.episodes.forget(KEY)
        assert await store.episodes(KEY) == []
    finally:
        await store.close()
    assert not any(b"ana@example.com" in data for data in files_of(tmp_path))


def files_of(folder: Path) -> list[bytes]:
    """Every file's bytes in `folder` (the database, its WAL and shared memory)."""
    return [file.read_bytes() for file in folder.iterdir()]
