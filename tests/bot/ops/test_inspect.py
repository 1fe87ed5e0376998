"""`inspect`'s view of the next request is the engine's own: the same preview, the same
usage-corrected token counts."""

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
