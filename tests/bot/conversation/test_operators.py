"""Operator status is checked at every turn: revoking an operator revokes their debug mode."""

from __future__ import annotations

from pathlib import Path

from bot.conversation.texts import t
from tests.bot.conversation.conftest import MakeApp, inbound
from tests.support.fakes import ScriptedChatModel

GROUP = "telegram:-100"
MEMBER = "telegram:1"


async def _debug_on_then_revoke(make_app: MakeApp, db: Path, model: ScriptedChatModel) -> None:
    """Operator turns debug on in the group; the next run no longer lists them."""
    app = await make_app(db=db, operators=(MEMBER,))
    assert await app.handler.handle(inbound(GROUP, "/debug on", user=MEMBER)) == [
        t("es", "debug_on")
    ]
    await app.aclose()


async def test_a_revoked_operator_gets_a_normal_reply_not_the_dry_run(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """Removed from VENTANA_OPERATORS: the next message is answered by the model, no debug view."""
    db = tmp_path / "bot.db"
    await _debug_on_then_revoke(make_app, db, ScriptedChatModel())
    model = ScriptedChatModel(script=["respuesta normal"])
    app = await make_app(model, db=db, operators=())
    replies = await app.handler.handle(inbound(GROUP, "hola", user=MEMBER))
    assert replies == ["respuesta normal"]
    assert len(model.requests) == 1
    assert len(await app.store.all_exchanges(GROUP)) == 1


async def test_revocation_clears_the_stored_debug_flag(make_app: MakeApp, tmp_path: Path) -> None:
    """A revoked operator's flag is cleared, so being listed again does not bring debug back."""
    db = tmp_path / "bot.db"
    await _debug_on_then_revoke(make_app, db, ScriptedChatModel())
    app = await make_app(ScriptedChatModel(), db=db, operators=())
    await app.handler.handle(inbound(GROUP, "hola", user=MEMBER))
    state = await app.store.peek_state(GROUP, 6)
    assert state is not None
    assert not state.debug_for(MEMBER)
    await app.aclose()
    model = ScriptedChatModel(script=["de nuevo normal"])
    again = await make_app(model, db=db, operators=(MEMBER,))
    assert await again.handler.handle(inbound(GROUP, "otra", user=MEMBER)) == ["de nuevo normal"]


async def test_the_engine_never_dry_runs_for_a_non_operator(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """Even with the flag stored (a state read before revocation), prepare needs an operator."""
    db = tmp_path / "bot.db"
    await _debug_on_then_revoke(make_app, db, ScriptedChatModel())
    app = await make_app(ScriptedChatModel(), db=db, operators=())
    state = await app.store.peek_state(GROUP, 6)
    assert state is not None
    assert state.debug_for(MEMBER)
    prepared = await app.engine.prepare(GROUP, "hola", user=MEMBER, operator=False)
    assert not prepared.dry_run
    prepared = await app.engine.prepare(GROUP, "hola", user=MEMBER, operator=True)
    assert prepared.dry_run


async def test_a_former_operator_may_still_switch_debug_off(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """Clearing is always allowed: '/debug off' is not refused to a former operator."""
    db = tmp_path / "bot.db"
    await _debug_on_then_revoke(make_app, db, ScriptedChatModel())
    app = await make_app(ScriptedChatModel(), db=db, operators=())
    replies = await app.handler.handle(inbound(GROUP, "/debug off", user=MEMBER))
    assert replies == [t("es", "debug_off")]
    state = await app.store.peek_state(GROUP, 6)
    assert state is not None
    assert not state.debug_for(MEMBER)
    assert await app.handler.handle(inbound(GROUP, "/debug on", user=MEMBER)) == [
        t("es", "not_operator")
    ]
