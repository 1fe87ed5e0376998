"""`MemoryEngine.preview`: the next request, read-only, and the same one `inspect` shows
(with the engine's usage-corrected token counts)."""

from __future__ import annotations

from pathlib import Path

from bot.app import App
from bot.ops import inspect_view
from memory.policy import Assembly
from providers.base import Usage
from tests.bot.ops.conftest import make_settings
from tests.support.fakes import ScriptedChatModel
from tests.support.inbound import inbound

KEY = "telegram:7"


async def test_inspect_counts_tokens_as_the_engine_does(tmp_path: Path) -> None:
    """With the provider reporting far more input tokens than our tokenizer counts, the
    engine's budgets grow with that correction, and inspect shows exactly those figures,
    not the raw tokenizer's."""
    settings = make_settings(tmp_path, window_exchanges=3, fold_batch=10)
    model = ScriptedChatModel(usage=Usage(5000, 5), reply=lambda r: f"vale: {len(r.messages)}")
    app = await App.build(settings, chat_model=model)
    try:
        for n in range(1, 6):
            text = f"El pedido #PED-{n}00 llega el día {n} de marzo"
            await app.handler.handle(inbound(KEY, text, f"u{n}"))
        engine = app.engine
        assert engine.calibration.factor > 1.5
        data = await inspect_view.collect(app.store, engine, KEY, settings)
        plan = (await engine.preview(KEY)).plan
    finally:
        await app.aclose()
    assert data is not None
    assert isinstance(plan, Assembly)
    shown = data["tokens"]["next_request_without_message"]
    parts = ("system", "summary", "carry_over", "pending", "window")
    assert shown == {p: plan.tokens[p] for p in parts} | {
        "total": sum(plan.tokens[p] for p in parts)
    }
    system = settings.resolved_system_prompt()
    assert shown["system"] == engine.count(system) > app.tokenizer.count(system)
    assert shown["window"] > 0
    assert shown["pending"] > 0


async def test_preview_is_the_next_request_and_changes_nothing(tmp_path: Path) -> None:
    """A preview calls no model and writes nothing; the next real turn with the same
    message sends exactly the request it showed."""
    settings = make_settings(tmp_path, window_exchanges=2, fold_batch=2)
    model = ScriptedChatModel(reply=lambda r: f"anotado: {len(r.messages)}")
    app = await App.build(settings, chat_model=model)
    try:
        for n in range(1, 8):
            await app.handler.handle(inbound(KEY, f"Pedido #PED-{n}00 el día {n}", f"u{n}"))
            await app.folds.drain()
        before, calls = await app.store.export(KEY), len(model.requests)
        seen = await app.engine.preview(KEY, "¿Cuándo llega el pedido #PED-100?")
        assert (await app.store.export(KEY), len(model.requests)) == (before, calls)
        await app.handler.handle(inbound(KEY, "¿Cuándo llega el pedido #PED-100?", "u-next"))
    finally:
        await app.aclose()
    assert isinstance(seen.plan, Assembly)
    assert seen.recall  # the old exchange the message is about
    assert seen.plan.recall.hits
    sent = model.requests[-1]
    assert (sent.system, tuple(sent.messages)) == (seen.plan.system, seen.plan.messages)
