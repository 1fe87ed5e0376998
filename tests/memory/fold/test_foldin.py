"""Fold-in service and engine paths beyond the invariants: versions, rebuilds, retries."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import structlog.testing

from memory.engine import MemoryEngine
from memory.fold.service import FoldService
from memory.fold.summarizer import FoldInput, SummaryDraft
from memory.policy import TooLarge
from memory.store.sqlite.store import SQLiteStore
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from providers.base import ContextTooLong
from tests.memory.fold.fold_support import engine_over
from tests.memory.test_engine_invariants import WordTokenizer
from tests.support.fakes import FakeSummarizer, ScriptedChatModel, eventually

KEY = "console:fold"
T0 = datetime(2026, 7, 1, tzinfo=UTC)


@dataclass
class Rig:
    store: SQLiteStore
    summarizer: FakeSummarizer
    folds: FoldService
    model: ScriptedChatModel
    engine: MemoryEngine


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    summarizer, model = FakeSummarizer(), ScriptedChatModel()
    setup = engine_over(
        summarizer,
        WordTokenizer(),
        model,
        window=2,
        fold_batch=2,
        summary_tokens=80,
        context_tokens=400,
    )
    async with setup as (store, folds, engine):
        yield Rig(store, summarizer, folds, model, engine)


async def _turns(rig: Rig, n: int, words: int = 3) -> None:
    for i in range(n):
        prepared = await rig.engine.prepare(KEY, f"m{i} " + " ".join(["palabra"] * words))
        if isinstance(prepared.plan, TooLarge):
            continue
        await rig.engine.record(prepared, await rig.engine.call(prepared), shown=("x",))
        await rig.folds.drain()


async def test_each_fold_is_a_new_version_and_old_ones_are_kept(rig: Rig) -> None:
    """Versions grow one by one with their source range, model and prompt version."""
    await _turns(rig, 8)
    state = await rig.store.peek_state(KEY, 2)
    assert state is not None
    versions = await rig.store.summaries(state.episode.id)
    assert [v.version for v in versions] == list(range(1, len(versions) + 1))
    assert len(versions) >= 2
    assert all(v.model == "fake-summary" and v.prompt_version == "fold-v1" for v in versions)
    assert versions[1].source_from > versions[0].source_to
    assert [v.round for v in versions] == [v.version for v in versions]


async def test_old_prompt_version_is_rebuilt_from_raw(rig: Rig) -> None:
    """A summary written by an older prompt version is rebuilt from every raw exchange."""
    state = await rig.store.turn_state(KEY, 2, T0)
    ids = []
    for i in range(6):
        ex = await rig.store.record_exchange(
            NewExchange(state.session_id, state.episode.id, f"u{i}", f"r{i}", True, None, T0)
        )
        ids.append(ex.id)
    await rig.store.write_summary(
        NewSummary(
            state.episode.id,
            0,
            "viejo resumen",
            ids[1],
            "fold-v0",
            "old",
            ids[0],
            ids[1],
            1,
            1,
            T0,
        )
    )
    version = await rig.folds.fold(KEY)
    assert version is not None
    assert (version.prompt_version, version.source_from, version.source_to) == (
        "fold-v1",
        ids[0],
        ids[3],
    )
    previous, folded = rig.summarizer.calls[-1]
    assert previous == ""  # rebuilt, not folded on top of the old text
    assert [ex.id for ex in folded] == ids[:4]


async def test_resummarize_on_demand(rig: Rig) -> None:
    """`rebuild` writes a fresh version from the raw exchanges (ventana resummarize)."""
    await _turns(rig, 6)
    before = await rig.store.peek_state(KEY, 2)
    assert before is not None
    assert before.summary is not None
    version = await rig.folds.rebuild(KEY)
    assert version is not None
    assert version.version == before.summary.version + 1
    assert rig.summarizer.calls[-1][0] == ""


class _RacingSummarizer(FakeSummarizer):
    """Each of its first `races` calls lets "another process" write a summary version
    first (the bot's own fold, racing `ventana resummarize`)."""

    def __init__(self, store: SQLiteStore, races: int) -> None:
        super().__init__()
        self.store, self.races = store, races

    async def summarize(self, request: FoldInput) -> SummaryDraft:
        if self.races > 0:
            self.races -= 1
            state = await self.store.peek_state(KEY, 2)
            assert state is not None
            base = state.summary.version if state.summary else 0
            checkpoint = state.summary.checkpoint if state.summary else 0
            rival = NewSummary(
                state.episode.id, base, "rival", checkpoint, "fold-v1", "other", 1, checkpoint,
                1, 1, T0,
            )  # fmt: skip
            await self.store.write_summary(rival)
        return await super().summarize(request)


async def test_resummarize_retries_a_lost_race_and_says_why_it_did_not(rig: Rig) -> None:
    """A rebuild that loses to another fold is retried and then written; one that keeps
    losing says so with the version now; a model failure names its kind; a chat whose
    exchanges all fit in the window has nothing pending; an unknown key is said so."""
    await _turns(rig, 6)
    rig.folds.summarizer = _RacingSummarizer(rig.store, races=1)
    done = await rig.folds.rebuild_report(KEY, backoff_s=0)
    assert done.cause == "written"
    assert done.version is not None
    assert done.version.model == "fake-summary"
    rig.folds.summarizer = _RacingSummarizer(rig.store, races=5)
    lost = await rig.folds.rebuild_report(KEY, attempts=3, backoff_s=0)
    now = await rig.store.peek_state(KEY, 2)
    assert now is not None
    assert now.summary is not None
    assert (lost.cause, lost.version, lost.current) == ("lost_race", None, now.summary.version)
    rig.folds.summarizer = FakeSummarizer(fail=True)
    failed = await rig.folds.rebuild_report(KEY, backoff_s=0)
    assert (failed.cause, failed.detail) == ("model_failed", "provider_error")
    assert (await rig.folds.rebuild_report("console:nobody")).cause == "unknown_key"
    await rig.engine.prepare("console:short", "hola")
    short = await rig.folds.rebuild_report("console:short")
    assert (short.cause, short.current) == ("nothing_pending", 0)


async def test_context_too_long_folds_and_retries_once(rig: Rig) -> None:
    """The provider's context-too-long error folds synchronously and retries one time."""
    await _turns(rig, 3)
    rig.model.script += [ContextTooLong("too long"), "respuesta tras plegar"]
    calls_before = len(rig.summarizer.calls)
    prepared = await rig.engine.prepare(KEY, "otra pregunta")
    outcome = await rig.engine.call(prepared)
    assert outcome.retried
    assert outcome.signal
    assert outcome.reply is not None
    assert outcome.reply.text == "respuesta tras plegar"
    assert len(rig.summarizer.calls) > calls_before
    assert len(rig.model.script) == 0


async def test_giant_message_is_refused_without_a_call(rig: Rig) -> None:
    """A message that cannot fit the budget alone is refused; the model is not called."""
    prepared = await rig.engine.prepare(KEY, " ".join(["x"] * 500))
    assert isinstance(prepared.plan, TooLarge)
    assert rig.model.requests == []


async def test_over_budget_folds_synchronously_then_fits(rig: Rig) -> None:
    """When pending + window exceed the budget, the turn folds first and then fits."""
    rig.summarizer.fail = True  # background folds fail: pending piles up
    await _turns(rig, 6, words=60)
    rig.summarizer.fail = False
    rig.folds._cooldown_until = 0.0  # the synchronous path tries regardless
    prepared = await rig.engine.prepare(KEY, "una pregunta más " + " ".join(["p"] * 40))
    assert prepared.sync_folds >= 1
    assert not isinstance(prepared.plan, TooLarge)
    assert prepared.plan.total_tokens <= 400


async def test_failed_sync_fold_refuses_with_its_own_reason(rig: Rig) -> None:
    """Over budget with the summary model down: refused as fold_failed, no chat call."""
    rig.summarizer.fail = True
    await _turns(rig, 6, words=60)
    calls = len(rig.model.requests)
    prepared = await rig.engine.prepare(KEY, "otra " + " ".join(["p"] * 60))
    assert isinstance(prepared.plan, TooLarge)
    assert prepared.plan.reason == "fold_failed"
    assert len(rig.model.requests) == calls


async def test_failed_fold_pauses_background_requests(rig: Rig) -> None:
    """After a summary-model error, turns do not hammer it with a fold each."""
    rig.summarizer.fail = True
    await _turns(rig, 8)
    assert len(rig.summarizer.calls) == 1


async def test_hanging_summary_model_cannot_hold_the_reply(rig: Rig) -> None:
    """Over budget with a summary model that never answers: refused within the budget."""
    import asyncio
    import time
    from dataclasses import replace

    rig.summarizer.fail = True
    await _turns(rig, 6, words=60)
    rig.summarizer.fail = False
    rig.summarizer.gate = asyncio.Event()  # never set: the summary model hangs
    rig.engine.config = replace(rig.engine.config, sync_fold_seconds=0.2)
    started = time.monotonic()
    prepared = await rig.engine.prepare(KEY, "otra " + " ".join(["p"] * 60))
    assert time.monotonic() - started < 1.0
    assert isinstance(prepared.plan, TooLarge)
    assert prepared.plan.reason == "fold_failed"


async def test_window_zero_makes_everything_after_the_checkpoint_pending(rig: Rig) -> None:
    """With no window, the exchanges after the checkpoint are pending, not forgotten."""
    await _turns(rig, 3)
    state = await rig.store.peek_state(KEY, 0)
    assert state is not None
    assert state.window == ()
    assert len(state.pending) == 3


async def test_short_repetitive_chat_keeps_folding_and_keeps_every_order_number() -> None:
    """Short messages that differ only in their numbers ("pedido #4818", "pedido #4823"):
    the extractive summary restates them briefly and leaves the numbers to the key-facts
    section. That once read as a summary that "lost content" and every later fold was
    rejected, so pending grew until the chat got "memory unavailable"."""
    from memory.fold.extractive import ExtractiveSummarizer
    from memory.tokens import default_tokenizer

    tok = default_tokenizer()
    model = ScriptedChatModel()
    summarizer = ExtractiveSummarizer(tok)
    setup = engine_over(summarizer, tok, model, window=6, fold_batch=4, summary_tokens=800)
    async with setup as (store, folds, engine):
        for i in range(60):
            model.script.append(
                f"Gracias, anoto lo que comentas en la respuesta {i}. Revisamos el caso y te"
                " confirmamos el siguiente paso."
            )
            prepared = await engine.prepare(KEY, f"mensaje {i} sobre pedido #48{i}")
            assert not isinstance(prepared.plan, TooLarge)
            await engine.record(prepared, await engine.call(prepared), shown=("x",))
            with structlog.testing.capture_logs() as logs:
                await folds.drain()
            assert not [e for e in logs if e["event"] == "fold_rejected"], (i, logs)
        state = await store.peek_state(KEY, 6)
        assert state is not None
        assert state.summary is not None
        assert len(state.pending) < 4, "every due fold was written"
        assert state.summary.checkpoint >= 60 - 6 - 3  # exchange ids count from 1
        for i in range(state.summary.checkpoint):
            assert f"#48{i}" in state.summary.text, f"#48{i} lost"


async def test_background_folds_are_bounded_but_budget_folds_never_wait() -> None:
    """With `concurrency` 2, ten chats due for a fold get two summary calls at a time (the
    rest wait their turn and all fold in the end); a fold the budget needs right now does
    not wait for a slot."""
    store = await SQLiteStore.open(":memory:")
    summarizer = FakeSummarizer(gate=asyncio.Event())
    tok = WordTokenizer()
    folds = FoldService(
        store,
        summarizer,
        tok,
        window=1,
        fold_batch=2,
        summary_tokens=400,
        language="es",
        concurrency=2,
    )
    keys = [f"console:c{i}" for i in range(10)]
    try:
        for key in keys:
            state = await store.turn_state(key, 1, T0)
            for i in range(3):
                await store.record_exchange(
                    NewExchange(
                        state.session_id, state.episode.id, f"u{i} x", f"r{i} y", True, None, T0
                    )
                )
            folds.request(key)
        await eventually(lambda: len(summarizer.calls) >= 2)
        await asyncio.sleep(0.05)
        assert len(summarizer.calls) == 2, "two background folds at once"
        urgent = asyncio.create_task(folds.fold("console:urgent-none"))
        sync_key = keys[-1]
        sync = asyncio.create_task(folds.fold(sync_key, keep_window=1))
        await eventually(lambda: len(summarizer.calls) >= 3)
        assert len(summarizer.calls) == 3, "the budget's fold started without a slot"
        assert await urgent is None
        assert summarizer.gate is not None
        summarizer.gate.set()
        await sync
        await folds.drain()
        for key in keys:
            state = await store.peek_state(key, 1)
            assert state is not None
            assert state.summary is not None, key
            assert not state.pending, key
    finally:
        await folds.aclose()
        await store.close()
