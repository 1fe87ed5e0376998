"""Invariants 1-4 and 6 of DESIGN.md, checked at every chat-model call over random
histories with automatic resets, and messages that go back to the closed case (which
revert the reset while it is recent)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from datetime import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.blocks import CASE_TAG, RECALL_TAG
from memory.engine import EngineConfig, MemoryEngine
from memory.fold.service import FoldService
from memory.policy import Assembly
from memory.store.sqlite.store import SQLiteStore
from memory.types import TopicDecision, TurnState
from providers.base import ChatRequest, ProviderUnavailable, Usage
from tests.support.engine import WordTokenizer
from tests.support.fakes import FakeSummarizer, ScriptedChatModel

KEY = "console:prop"
BUDGET = 220


message = st.tuples(
    st.just("msg"),
    st.integers(min_value=1, max_value=40),  # words in the user message
    st.sampled_from(["signal", "signal", "signal", "empty", "error", "truncated", "loop"]),
)
operation = st.one_of(
    message,
    st.tuples(st.just("fold"), st.booleans()),  # True: the fold fails
    st.tuples(st.just("window"), st.integers(min_value=1, max_value=6)),
    st.tuples(st.just("slow"), st.just(0)),
    st.tuples(st.just("reset"), st.just(0)),  # the next message's topic check resets
    st.tuples(st.just("back"), st.just(0)),  # a message repeating the closed case's words
)


class Topic:
    """A topic check that resets exactly when told to, for the next message."""

    def __init__(self) -> None:
        self.reset_next = False

    async def __call__(self, _state: TurnState, _message: str, _now: datetime) -> TopicDecision:
        if self.reset_next:
            self.reset_next = False
            return TopicDecision("reset", "forced")
        return TopicDecision("continue", "same")


async def _check_request(store: SQLiteStore, request: ChatRequest, budget: int) -> None:
    state = await store.peek_state(KEY, 1)
    assert state is not None
    text = request.system + "\n".join(m.content for m in request.messages)
    version = re.search(r'<memory version="(\d+)">', request.system)
    checkpoint = 0
    if version:
        versions = await store.summaries(state.episode.id)
        checkpoint = next(s.checkpoint for s in versions if s.version == int(version.group(1)))
    recall = _block(request.system, RECALL_TAG)
    previous = state.episode.previous
    if f"<{CASE_TAG}>" in request.system:  # the closed case's facts: only after a reset
        assert previous is not None
    for ex in await store.all_exchanges(KEY):
        if ex.episode_id != state.episode.id:
            # invariant 6: an earlier episode reaches the model only as the closed case,
            # recalled while it is in play, in the recall block
            if ex.user_text in text:
                assert previous is not None
                assert ex.episode_id == previous.episode_id
                assert ex.user_text in recall
            continue
        if not ex.signal:  # invariant 3: noise is never sent
            assert ex.reply_text == "" or ex.reply_text not in text
            continue
        # invariant 1: covered by the summary in this request, or sent verbatim
        assert ex.id <= checkpoint or (ex.user_text in text and ex.reply_text in text), ex.id
    words = WordTokenizer()
    total = words.count(request.system) + sum(words.count(m.content) + 4 for m in request.messages)
    assert total <= budget  # invariant 2


def _block(system: str, tag: str) -> str:
    start = system.find(f"<{tag}>")
    return "" if start < 0 else system[start : system.index(f"</{tag}>", start)]


async def _run(ops: list[tuple[str, object, ...]]) -> None:  # type: ignore[misc]
    store = await SQLiteStore.open(":memory:")
    summarizer = FakeSummarizer()
    tok = WordTokenizer()
    folds = FoldService(
        store, summarizer, tok, window=3, fold_batch=2, summary_tokens=60, language="es"
    )
    model = ScriptedChatModel()
    model.on_call = lambda req: _check_request(store, req, BUDGET)
    topic = Topic()
    engine = MemoryEngine(
        store,
        model,
        folds,
        tok,
        EngineConfig(
            "Eres un asistente.",
            window=3,
            fold_batch=2,
            context_tokens=BUDGET,
            reply_tokens=50,
            summary_tokens=60,
        ),
        topic=topic,
    )
    n = 0
    closed: list[str] = []  # the user words of the episode the latest reset closed
    try:
        for op in ops:
            kind = op[0]
            if kind == "msg":
                n += 1
                await _turn(engine, model, n, int(op[1]), str(op[2]))  # type: ignore[call-overload]
            elif kind == "reset":
                state = await store.peek_state(KEY, 1)
                if state is not None and state.window:
                    closed = state.window[-1].user_text.split()[1:]
                topic.reset_next = True
            elif kind == "back":
                n += 1
                await _turn(engine, model, n, 0, "signal", closed[:3])
            elif kind == "fold":
                summarizer.fail = bool(op[1])
                before = await _versions(store)
                await folds.fold(KEY)
                if summarizer.fail:  # invariant 4: a failed fold changes nothing
                    assert await _versions(store) == before
                summarizer.fail = False
            elif kind == "window":
                engine.config = replace(engine.config, window=int(op[1]))  # type: ignore[call-overload]
                folds.window = engine.config.window
            else:
                gate = summarizer.gate = asyncio.Event()
                folds.request(KEY)
                # A slow fold: it finishes later on its own (a sync fold may wait for it).
                asyncio.get_running_loop().call_later(0.02, gate.set)
                n += 1
                await _turn(engine, model, n, 3, "signal")
                await folds.drain()
                summarizer.gate = None
        await folds.drain()
        for _, exchanges in summarizer.calls:  # invariant 3: noise is never folded
            assert all(ex.signal for ex in exchanges)
            assert not any("NOISE" in ex.reply_text for ex in exchanges)
    finally:
        await folds.aclose()
        await store.close()


async def _versions(store: SQLiteStore) -> list[tuple[int, int, str]]:
    state = await store.peek_state(KEY, 1)
    if state is None:
        return []
    return [(s.version, s.checkpoint, s.text) for s in await store.summaries(state.episode.id)]


async def _turn(
    engine: MemoryEngine,
    model: ScriptedChatModel,
    n: int,
    words: int,
    kind: str,
    repeat: list[str] | None = None,
) -> None:
    user = f"u{n} " + " ".join([*(repeat or ()), *(f"w{n}x{i}" for i in range(words))])
    reply = {
        "signal": f"r{n} respuesta útil número {n}",
        "empty": "   ",
        "truncated": f"r{n} NOISE cortada",
        "loop": " ".join([f"NOISE{n} bucle"] * 30),
    }.get(kind)
    model.script.append(ProviderUnavailable("down") if kind == "error" else str(reply))
    model.stop_reason = "max_tokens" if kind == "truncated" else "end"
    prepared = await engine.prepare(KEY, user)
    if not isinstance(prepared.plan, Assembly):
        model.script.pop()
        return
    outcome = await engine.call(prepared)
    await engine.record(prepared, outcome, shown=("x",))
    if kind != "signal":
        assert not outcome.signal


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=30))
def test_invariants_hold_over_random_histories(ops: list[tuple[str, object, ...]]) -> None:  # type: ignore[misc]
    """Nothing lost, bounded context, noise never sent or folded, failed folds change
    nothing, and (with resets that stand or revert) earlier episodes reach the model only
    as the closed case while it is in play."""
    asyncio.run(_run(ops))


async def test_slow_fold_does_not_delay_the_reply() -> None:
    """While a fold is blocked, replies keep coming and pending goes to the model verbatim."""
    store = await SQLiteStore.open(":memory:")
    summarizer = FakeSummarizer(gate=asyncio.Event())
    tok = WordTokenizer()
    folds = FoldService(
        store, summarizer, tok, window=2, fold_batch=2, summary_tokens=60, language="es"
    )
    model = ScriptedChatModel()
    engine = MemoryEngine(store, model, folds, tok, EngineConfig("S", window=2, fold_batch=2))
    try:
        for n in range(1, 8):
            prepared = await engine.prepare(KEY, f"u{n} hola")
            outcome = await asyncio.wait_for(engine.call(prepared), timeout=1)
            await engine.record(prepared, outcome, shown=("x",))
        assert summarizer.calls, "a fold was started in the background"
        assert (await _versions(store)) == []  # still blocked
        sent = " ".join(m.content for m in model.requests[-1].messages)
        for n in range(1, 7):
            assert f"u{n} hola" in sent  # every earlier exchange still reaches the model
        summarizer.gate.set()  # type: ignore[union-attr]
        await folds.drain()
        assert (await _versions(store)) != []
    finally:
        await folds.aclose()
        await store.close()


async def test_provider_usage_corrects_budget_upward_only() -> None:
    """Reported usage above our count inflates later counts; usage below it is ignored."""
    store = await SQLiteStore.open(":memory:")
    tok = WordTokenizer()
    folds = FoldService(
        store, FakeSummarizer(), tok, window=2, fold_batch=9, summary_tokens=60, language="es"
    )
    model = ScriptedChatModel()
    engine = MemoryEngine(store, model, folds, tok, EngineConfig("S", window=2, fold_batch=9))
    try:
        assert engine.count("uno dos tres cuatro") == 4
        prepared = await engine.prepare(KEY, "hola " * 50)  # ~55 of our tokens; usage says 10
        await engine.record(prepared, await engine.call(prepared), shown=("x",))
        assert engine.count("uno dos tres cuatro") == 4
        model.usage = Usage(1000, 5)  # the provider counts far more than we did
        prepared = await engine.prepare(KEY, "hola")
        await engine.record(prepared, await engine.call(prepared), shown=("x",))
        assert engine.calibration.factor > 1.0
        assert engine.count("uno") > 1
    finally:
        await folds.aclose()
        await store.close()
