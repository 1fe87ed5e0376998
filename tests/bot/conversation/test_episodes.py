"""Episodes end to end: automatic reset and /undo, /reset, /forget with no bytes left."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from bot.conversation.texts import t
from tests.bot.conversation.conftest import MakeApp, inbound
from tests.support.fakes import FakeSummarizer, ScriptedChatModel

TECH = [
    ("Hola, el router TP-Link del ticket #4821 se desconecta cada 10 minutos", "¿Qué luz tiene?"),
    ("La luz de internet parpadea en naranja", "Reinicia el router y dime si sigue."),
    ("Lo reinicié y sigue cortándose", "Actualiza el firmware a la versión 1.2.3."),
    ("Actualicé el firmware y ahora va estable", "Perfecto, lo dejamos en observación."),
    ("Ya funciona, gracias, eso es todo", "¡Me alegro! Cierro el ticket #4821."),
]
BILLING = "Hola, tengo un cobro duplicado en la factura de julio: me cargaron 49,90 € dos veces"


async def _talk(app, key: str, model: ScriptedChatModel) -> None:  # type: ignore[no-untyped-def]
    for user, reply in TECH:
        model.script.append(reply)
        await app.handler.handle(inbound(key, user))
        await app.folds.drain()


async def test_case_closed_then_billing_resets_and_undo_restores(make_app: MakeApp) -> None:
    """A closed ticket then a billing question: reset with a notice (the closed case's
    facts only in their own block, none of its conversation); /undo brings it back."""
    model = ScriptedChatModel()
    app = await make_app(model, window_exchanges=2, fold_batch=2)
    key = "telegram:55"
    await _talk(app, key, model)
    before = await app.store.peek_state(key, 2)
    assert before is not None
    assert before.summary is not None
    replies = await app.handler.handle(inbound(key, BILLING))
    assert "/undo" in replies[0]  # the user is told, in Spanish
    sent = model.requests[-1].system + " ".join(m.content for m in model.requests[-1].messages)
    case = sent[sent.index("<previous_case>") : sent.index("</previous_case>")]
    assert "#4821" in case
    assert "router" not in sent
    assert "#4821" not in sent.replace(case, "")
    episodes = await app.store.episodes(key)
    # an automatic reset, named by the model's strongest feature (closure or the new intent)
    assert episodes[-1].opened_by in ("auto:case_closed", "auto:intent_changed")
    (undone,) = await app.handler.handle(inbound(key, "/undo"))
    assert "Recuperé" in undone
    after = await app.store.peek_state(key, 2)
    assert after is not None
    assert after.summary == before.summary
    await app.handler.handle(inbound(key, "¿Y lo del router?"))
    sent = model.requests[-1].system + " ".join(m.content for m in model.requests[-1].messages)
    assert "#4821" in sent
    assert "49,90 €" in sent


async def test_manual_reset_hides_everything_before(make_app: MakeApp) -> None:
    """After /reset no earlier content reaches the model; messages stay stored."""
    model = ScriptedChatModel()
    app = await make_app(model, topic_detection="off")
    await app.handler.handle(inbound("console:x", "Mi DNI es 12345678Z"))
    await app.handler.handle(inbound("console:x", "/reset"))
    await app.handler.handle(inbound("console:x", "Hola de nuevo"))
    sent = " ".join(m.content for m in model.requests[-1].messages) + model.requests[-1].system
    assert "12345678Z" not in sent
    assert len(await app.store.all_exchanges("console:x")) == 2


async def test_forget_leaves_no_row_and_no_byte(make_app: MakeApp, tmp_path: Path) -> None:
    """/forget (confirmed) deletes every row; the marker is in neither the DB nor the WAL."""
    db = tmp_path / "forget.db"
    model = ScriptedChatModel(default="Entendido MARKER-REPLY")
    app = await make_app(model, db=db, window_exchanges=2, fold_batch=2)
    for i in range(8):
        filler = " ".join(f"palabra{i}x{j}" for j in range(40))
        await app.handler.handle(inbound("whatsapp:346", f"MARKER-SECRETO-{i} {filler}"))
    model.script.append("hola, otro usuario")
    await app.handler.handle(inbound("whatsapp:999", "otro usuario"))
    await app.folds.drain()
    assert b"MARKER-SECRETO" in _files(db)
    (ask,) = await app.handler.handle(inbound("whatsapp:346", "/forget"))
    assert "/forget confirm" in ask
    assert b"MARKER-SECRETO" in _files(db)
    await app.handler.handle(inbound("whatsapp:346", "/forget confirm"))
    exported = await app.store.export("whatsapp:346")
    assert all(not exported[t] for t in ("episodes", "exchanges", "summaries", "inbox"))
    assert b"MARKER" not in _files(db)
    assert await app.store.peek_state("whatsapp:999", 1) is not None


async def test_forget_with_a_reader_holding_on_says_it_is_not_done_yet(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """/forget while a reader holds an old snapshot answers "shortly", never "erased";
    another chat is answered meanwhile; when the reader closes no byte is left."""
    db = tmp_path / "held.db"
    app = await make_app(ScriptedChatModel(default="ok"), db=db, topic_detection="off")
    await app.handler.handle(inbound("whatsapp:347", "MARKER-HELD mi teléfono es 600"))
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM exchanges").fetchall()
    (reply,) = await app.handler.handle(inbound("whatsapp:347", "/forget confirm"))
    assert reply == t("es", "forget_pending")
    assert "Borré" not in reply
    assert b"MARKER-HELD" in _files(db)
    async with asyncio.timeout(2):
        assert await app.handler.handle(inbound("whatsapp:998", "hola")) == ["ok 2"]
    reader.execute("ROLLBACK")
    reader.close()
    assert await app.store.erased(wait_s=5)
    assert b"MARKER-HELD" not in _files(db)


async def test_fold_running_during_forget_writes_nothing(make_app: MakeApp) -> None:
    """A fold in flight when the key is forgotten cannot bring any of it back."""
    app = await make_app(window_exchanges=1, fold_batch=1, topic_detection="off")
    gate = asyncio.Event()
    app.folds.summarizer = FakeSummarizer(gate=gate)
    for i in range(3):
        await app.handler.handle(inbound("console:f", f"mensaje {i}"))
    assert app.folds._running  # a fold is waiting on the gate
    await app.store.forget("console:f")  # the CLI path: no cancellation of the fold
    gate.set()
    await app.folds.drain()
    assert await app.store.peek_state("console:f", 5) is None
    assert await app.store.all_exchanges("console:f") == []


def _files(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
