"""One memory engine for tests: a word tokenizer, the fold service with the fake
summarizer, a scripted chat model, and a turn run the way the handler runs it."""

from __future__ import annotations

from typing import Any

from memory.engine import EngineConfig, MemoryEngine, TopicCheck, no_topic_check
from memory.fold.service import FoldService
from memory.policy import Assembly
from memory.store import Store
from tests.support.fakes import FakeSummarizer, ScriptedChatModel


class WordTokenizer:
    """Additive and fast: one token per whitespace-separated word."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def engine_for(
    store: Store,
    *,
    window: int = 4,
    fold_batch: int = 4,
    topic: TopicCheck = no_topic_check,
    **config: Any,
) -> tuple[MemoryEngine, ScriptedChatModel]:
    """An engine on `store` ("Soporte." as system prompt, 4,000 tokens unless `config`
    says otherwise) and the scripted model it calls."""
    tok = WordTokenizer()
    folds = FoldService(
        store,
        FakeSummarizer(),
        tok,
        window=window,
        fold_batch=fold_batch,
        summary_tokens=200,
        language="es",
    )
    model = ScriptedChatModel()
    settings = {"context_tokens": 4000} | config
    engine_config = EngineConfig("Soporte.", window=window, fold_batch=fold_batch, **settings)
    return MemoryEngine(store, model, folds, tok, engine_config, topic=topic), model


async def turn(engine: MemoryEngine, key: str, text: str) -> Assembly:
    """One answered turn with its background fold finished; the request it sent."""
    prepared = await engine.prepare(key, text)
    outcome = await engine.call(prepared)
    await engine.record(prepared, outcome, shown=("x",))
    await engine.folds.drain()
    return outcome.assembly
