"""Facts of a text are extracted once: a turn runs the patterns on its new message alone,
however many readers (the topic check, recall's query) ask for its facts (issue 29)."""

from __future__ import annotations

import uuid

from memory.facts import facts_of
from memory.store.sqlite.store import SQLiteStore
from memory.topic.decide import TopicSettings, make_topic_check
from tests.support.engine import engine_for, turn

KEY = "console:once"


async def test_a_turn_extracts_the_facts_of_its_message_once() -> None:
    """Topic check and recall share the message's facts; the window's replies, which hold
    none of its values, are never extracted for the topic check."""
    store = await SQLiteStore.open(":memory:")
    try:
        topic = make_topic_check(TopicSettings(), None)
        engine, model = engine_for(store, window=3, fold_batch=50, topic=topic)
        tag = f"t{uuid.uuid4().hex[:5]}"  # a letter first: never a bare number
        model.reply = lambda request: f"Anotado {tag}, {len(request.messages)} mensajes."
        misses = []
        for n in range(8):
            before = facts_of.cache_info().misses
            await turn(engine, KEY, f"El pedido #{tag}{n} llegó roto, pagué {n + 10},50 €.")
            misses.append(facts_of.cache_info().misses - before)
        # The first turn has nothing to compare with or recall: no reader asks.
        assert misses[0] <= 1
        assert misses[1:] == [1] * 7
    finally:
        await store.close()
