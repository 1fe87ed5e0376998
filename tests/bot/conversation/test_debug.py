"""Debug mode: a dry run that calls no model and writes nothing, operators only."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from bot.app import App
from bot.conversation import debug_view
from bot.conversation.debug_view import render_debug
from bot.conversation.inbound import Inbound
from config.settings import Settings
from memory.policy import Assembly
from memory.recall.rank import Hit
from memory.store.sqlite.store import SQLiteStore
from memory.types import Exchange
from tests.bot.ops.conftest import make_settings, recording_model
from tests.memory import test_carry_over as carry
from tests.support.fakes import ScriptedChatModel
from tests.support.inbound import inbound as make_inbound

KEY, OPERATOR, STRANGER = "telegram:42", "telegram:42", "telegram:99"


def inbound(text: str, n: int, *, key: str = KEY, user: str = OPERATOR) -> Inbound:
    return make_inbound(key, text, f"u{n}", user)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[App]:
    built = await App.build(settings, chat_model=recording_model())
    yield built
    await built.aclose()


async def talk(app: App, texts: list[str], start: int = 0, **kw: str) -> list[list[str]]:
    out = []
    for n, text in enumerate(texts, start=start):
        out.append(await app.handler.handle(inbound(text, n, **kw)))
        await app.folds.drain()
    return out


def snapshot(db: Path) -> tuple[dict[str, int], int]:
    """Row counts of every table and the file's data_version, from a separate connection."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        counts = {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        return counts, con.execute("PRAGMA data_version").fetchone()[0]
    finally:
        con.close()


def data_version_changed(con: sqlite3.Connection, before: int) -> bool:
    return con.execute("PRAGMA data_version").fetchone()[0] != before


async def test_debug_mode_calls_no_model_and_writes_nothing(app: App, settings: Settings) -> None:
    """With debug on, messages get the request view; no model call, no row, no commit."""
    await talk(app, [f"Pedido #PED-{n} por {n}0,00 €" for n in range(1, 7)])
    model = app.chat_model
    assert isinstance(model, ScriptedChatModel)
    assert (await talk(app, ["/debug on"], start=10))[0]
    await app.handler.drain()  # the done marks of the messages before: committed now
    calls, folds = len(model.requests), app.folds.calls
    counts, _ = snapshot(settings.db)
    watcher = sqlite3.connect(settings.db)
    version = watcher.execute("PRAGMA data_version").fetchone()[0]
    try:
        replies = await talk(app, ["¿Cuál era mi pedido?", "Otra pregunta más"], start=20)
        assert not data_version_changed(watcher, version)
    finally:
        watcher.close()
    assert len(model.requests) == calls
    assert app.folds.calls == folds
    assert snapshot(settings.db)[0] == counts
    view = replies[0][0]
    assert "MODO DEPURACIÓN" in view
    assert "¿Cuál era mi pedido?" in view
    assert f"/{settings.context_tokens}" in view


async def test_debug_view_shows_every_part(app: App, settings: Settings) -> None:
    """The view has the system prompt, the summary facts, pending/window, tokens and topic."""
    await talk(app, [f"Pedido #PED-{n} por {n}0,00 €" for n in range(1, 8)])
    await talk(app, ["/debug on"], start=10)
    view = (await talk(app, ["¿Y el último?"], start=20))[0][0]
    state = await app.store.peek_state(KEY, settings.window_exchanges)
    assert state is not None
    assert state.summary is not None
    assert settings.resolved_system_prompt() in view
    s = state.summary
    assert f"resumen v{s.version} · checkpoint #{s.checkpoint} · prompt {s.prompt_version}" in view
    assert f"ronda {s.round}" in view
    for ex in (*state.pending, *state.window):
        assert ex.user_text in view
        assert ex.reply_text in view
    for part in ("sistema", "resumen", "pendientes", "ventana", "mensaje", "total"):
        assert part in view
    assert "tema" in view
    assert "continuar" in view
    assert "mode" in view


async def test_debug_off_returns_to_normal(app: App) -> None:
    """After /debug off the next message is answered by the model and stored."""
    model = app.chat_model
    assert isinstance(model, ScriptedChatModel)
    await talk(app, ["/debug on", "hola", "/debug off", "hola otra vez"])
    assert len(model.requests) == 1
    assert model.requests[0].messages[-1].content == "hola otra vez"


async def test_non_operator_cannot_switch_debug_on(app: App) -> None:
    """A user who is not an operator is refused, and the chat stays in normal mode."""
    model = app.chat_model
    assert isinstance(model, ScriptedChatModel)
    key = "telegram:99"
    replies = await talk(app, ["/debug on", "hola"], key=key, user=STRANGER)
    assert "no está disponible" in replies[0][0]
    state = await app.store.peek_state(key, 1)
    assert state is not None
    assert not state.debug
    assert len(model.requests) == 1


async def test_debug_view_lists_recall_with_terms_and_score(app: App) -> None:
    """The view lists each recalled exchange with its number, matched terms and score."""
    early = "Mi router es el Zyxel XR-5521 con la IP fija 83.44.120.7"
    await talk(app, [early, *[f"Pedido #PED-{n} por {n}0,00 €" for n in range(1, 9)]])
    await talk(app, ["/debug on"], start=20)
    view = (await talk(app, ["¿Qué IP fija tenía el router?"], start=30))[0][0]
    assert "recuerdo: 1 intercambios antiguos en la petición" in view
    assert "términos: ip, fij, rout" in view  # the stems that matched
    assert "puntuación " in view
    assert early in view
    quiet = (await talk(app, ["Vale, gracias"], start=40))[0][0]
    assert "recuerdo: nada" in quiet


async def test_debug_view_shows_a_recalled_side_as_cut_for_the_request(app: App) -> None:
    """A recalled side cut to what matched is shown cut, as the model would get it."""
    early = (
        "Hola, buenas tardes a todo el equipo de soporte. Mi router es el Zyxel XR-5521 con "
        "la IP fija 83.44.120.7. Ayer llovió muchísimo en el pueblo y se fue la luz un rato."
    )
    await talk(app, [early, *[f"Pedido #PED-{n} por {n}0,00 €" for n in range(1, 9)]])
    await talk(app, ["/debug on"], start=20)
    view = (await talk(app, ["¿Qué IP fija tenía el router?"], start=30))[0][0]
    assert "Mi router es el Zyxel XR-5521 con la IP fija 83.44.120.7." in view
    assert "[…]" in view
    assert "llovió" not in view  # the request does not carry it, so neither does the view


async def test_debug_view_shows_the_carry_over_of_an_automatic_reset() -> None:
    """A dry run that would reset shows the identity block the new episode would carry."""
    store = await SQLiteStore.open(":memory:")
    try:
        engine = carry.engine_for(store)
        for text in carry.OLD:
            await carry.turn(engine, text)
        prepared = await engine.prepare(carry.KEY, carry.NEW, dry_run=True)
        view = render_debug(prepared, "en")
        assert "carried over from earlier conversations: 2 facts about the user" in view
        assert "email: ana@example.com" in view
        assert isinstance(prepared.plan, Assembly)
        assert "ana@example.com" in prepared.plan.system
        state = await store.peek_state(carry.KEY, 2)
        assert state is not None
        assert state.episode.carry_over == ()
    finally:
        await store.close()


def test_debug_view_says_an_exchange_came_by_meaning_when_no_term_matched() -> None:
    """An exchange the sentence embedding alone recalled is listed as near in meaning."""
    said = Exchange(7, 1, "i live in a small village", "nice", True, None, None)
    recall = SimpleNamespace(hits=(Hit(said, 0.0, ()),), text="")
    plan = cast(Assembly, SimpleNamespace(recall=recall, tokens={"recall": 12}))
    lines = debug_view._recall(plan, 1, debug_view._L["en"])
    assert any("#7 · ? · near the message in meaning" in line for line in lines)
    assert not any("score 0.00" in line for line in lines)
