"""The handler: per-chat order, cross-chat concurrency, durable intake, persistence."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.channels.console import run_console
from bot.conversation.texts import t
from memory.store.sqlite import turns as sqlite_turns
from memory.types import SessionKey
from providers.base import ChatRequest
from providers.offline import OfflineChatModel
from tests.bot.conversation.conftest import Collect, MakeApp, inbound
from tests.support.fakes import ScriptedChatModel


async def test_two_chats_run_concurrently_while_one_chat_stays_ordered(make_app: MakeApp) -> None:
    """Chat B is answered while chat A's model call is stuck; A's second message waits."""
    release_a = asyncio.Event()
    order: list[str] = []

    async def on_call(request: ChatRequest) -> None:
        text = request.messages[-1].content
        order.append(text)
        if text == "A1":
            await release_a.wait()

    model = ScriptedChatModel(on_call=on_call)
    app = await make_app(model)
    a1 = await app.handler.submit(inbound("console:a", "A1"))
    a2 = await app.handler.submit(inbound("console:a", "A2"))
    b1 = await app.handler.submit(inbound("console:b", "B1"))
    assert a1
    assert a2
    assert b1
    await asyncio.wait_for(b1, timeout=2)  # B never waits for A
    assert "A2" not in order  # A2 queued behind A1
    release_a.set()
    await asyncio.wait_for(asyncio.gather(a1, a2), timeout=2)
    assert order.index("A1") < order.index("A2")
    assert app.handler.serial.active_keys == 0  # nothing kept for idle chats


async def test_the_app_opens_its_database_with_the_configured_sync(make_app: MakeApp) -> None:
    """`VENTANA_DB_SYNC` reaches the store the bot runs on; `normal` unless set."""
    assert await (await make_app()).store.synchronous() == "normal"
    app = await make_app(db_sync="full")
    assert await app.store.synchronous() == "full"
    replies = await app.handler.handle(inbound("telegram:7", "Hola, ¿seguís abiertos?"))
    assert replies  # turns work the same, only commits wait for the disk


async def test_redelivery_is_processed_once(make_app: MakeApp) -> None:
    """The same external id twice: one model call, one exchange."""
    model = ScriptedChatModel()
    app = await make_app(model)
    first = await app.handler.handle(inbound("console:d", "hola", ext="same"))
    second = await app.handler.handle(inbound("console:d", "hola", ext="same"))
    assert first
    assert second == []
    assert len(model.requests) == 1
    assert len(await app.store.all_exchanges("console:d")) == 1


async def test_redelivery_while_the_done_mark_is_uncommitted_is_not_sent_again(
    make_app: MakeApp,
) -> None:
    """The "done" mark is written after delivery without waiting. A redelivery that
    looks before it commits, while the row still says "answered", must be ignored, not
    delivered again as if a crash had left it (a WhatsApp test caught this once)."""
    model = ScriptedChatModel()
    app = await make_app(model)
    sent: list[str] = []

    class Outbox:
        async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
            sent.extend(texts)
            await app.store.db._lock.acquire()  # the writer is busy: the mark must wait

        def working(self, key: SessionKey) -> contextlib.AbstractAsyncContextManager[None]:
            return contextlib.nullcontext()

    app.handler.register("console", Outbox())
    await app.handler.handle(inbound("console:m", "hola", ext="once"))
    rows = await app.store.db._r.execute_fetchall(
        "SELECT status FROM inbox WHERE external_id = 'once'"
    )
    assert [row["status"] for row in rows] == ["answered"]  # the done mark is uncommitted
    # What a redelivery does once its intake finds the entry already in the inbox:
    again = await app.handler.intake._redelivered(inbound("console:m", "hola", ext="once"))
    assert again is None
    app.store.db._lock.release()
    await app.handler.drain()
    for _ in range(100):
        entry = await app.store.inbox_get("console:m", "once")
        if entry is not None and entry.status == "done":
            break
        await asyncio.sleep(0.01)
    assert entry is not None
    assert entry.status == "done"
    assert len(sent) == 1
    assert len(model.requests) == 1


async def test_shutdown_cancelled_partway_still_commits_and_closes(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """Ctrl-C can land while the bot is already shutting down (end of input raced the
    signal). A cancelled `aclose` must still commit the queued done mark and close the
    database: an open connection's thread would keep the process from exiting."""
    db = tmp_path / "shutdown.db"
    app = await make_app(db=db)
    await app.handler.handle(inbound("console:z", "hola", ext="z1"))
    assert app.store.db._queued, "the done mark waits for a write to ride with"
    closing = asyncio.create_task(app.aclose())
    await asyncio.sleep(0)  # aclose is under way, waiting on the batch
    closing.cancel()
    await asyncio.gather(closing, return_exceptions=True)
    assert app.store.db._w._connection is None, "the writer must be closed"
    assert app.store.db._r._connection is None, "the reader must be closed"
    again = await make_app(db=db)
    entry = await again.store.inbox_get("console:z", "z1")
    assert entry is not None
    assert entry.status == "done"


async def test_unfinished_inbox_is_processed_after_restart(
    make_app: MakeApp, tmp_path: Path
) -> None:
    """An entry committed before a crash is answered by the next run; answered ones resent."""
    db = tmp_path / "restart.db"
    first = await make_app(db=db)
    entry = await first.store.inbox_add("console:r", "x1", "console:r", "text", "hola", _now())
    done = await first.store.inbox_add("console:r", "x0", "console:r", "text", "antes", _now())
    assert entry
    assert done
    await first.store.inbox_mark(done.id, "answered", ["respuesta guardada"], at=_now())
    model = ScriptedChatModel()
    second = await make_app(model, db=db)
    sent: list[str] = []
    second.handler.register("console", Collect(sent))
    assert await second.handler.recover() == 2
    await second.handler.drain()
    assert "respuesta guardada" in sent  # re-delivered, no model call for it
    assert [r.messages[-1].content for r in model.requests] == ["hola"]
    assert await second.store.inbox_unfinished() == []


async def test_console_conversation_survives_restart(make_app: MakeApp, tmp_path: Path) -> None:
    """Quit the console, start again: the earlier exchanges are still in the window."""
    db = tmp_path / "console.db"
    app = await make_app(db=db)
    out = io.StringIO()
    status = await run_console(
        app.handler, app.settings, "ana", src=io.StringIO("Mi pedido es #A-77\n/quit\n"), out=out
    )
    assert status == 0
    assert "bot>" in out.getvalue()
    await app.aclose()
    model = ScriptedChatModel()
    again = await make_app(model, db=db)
    await run_console(
        again.handler,
        again.settings,
        "ana",
        src=io.StringIO("¿Cuál era mi pedido?\n"),
        out=io.StringIO(),
    )
    sent = " ".join(m.content for m in model.requests[-1].messages)
    assert "#A-77" in sent


async def test_offline_model_answers_in_the_configured_language(make_app: MakeApp) -> None:
    """Without keys the offline model says plainly that it is offline, in Spanish or English."""
    es = await make_app(OfflineChatModel(), language="es")
    (reply,) = await es.handler.handle(inbound("console:o", "hola"))
    assert "sin conexión" in reply
    en = await make_app(OfflineChatModel(), db=None, language="en")
    (reply,) = await en.handler.handle(inbound("console:p", "hello"))
    assert "offline" in reply


async def test_bad_messages_get_clear_answers_and_lose_nothing(make_app: MakeApp) -> None:
    """Empty, oversized and non-text messages are answered clearly; no model call."""
    model = ScriptedChatModel()
    app = await make_app(model, max_message_chars=100)
    (empty,) = await app.handler.handle(inbound("console:b", "   "))
    (big,) = await app.handler.handle(inbound("console:b", "x" * 101))
    sticker = inbound("console:b", "")
    (media,) = await app.handler.handle(replace(sticker, kind="unsupported"))
    assert "vacío" in empty
    assert "101" in big
    assert "texto" in media
    assert model.requests == []
    stored = (await app.store.export("console:b"))["inbox"]
    assert isinstance(stored, list)
    assert len(stored) == 3


def _now() -> datetime:
    return datetime.now(UTC)


async def test_debug_on_applies_to_a_message_queued_right_behind_it(make_app: MakeApp) -> None:
    """'/debug on' and the next message in one batch: that message is already a dry run."""
    model = ScriptedChatModel()
    app = await make_app(model, operators=("telegram:1",))
    on = await app.handler.submit(inbound("telegram:1", "/debug on"))
    msg = await app.handler.submit(inbound("telegram:1", "hola"))
    assert on is not None
    assert msg is not None
    await on
    (view,) = await msg
    assert "DEPURACIÓN" in view
    assert model.requests == []
    assert await app.store.all_exchanges("telegram:1") == []


async def test_fold_in_goes_to_the_summary_model_not_the_chat_model(tmp_path: Path) -> None:
    """With both models configured, only the summary model sees fold-in requests."""
    from bot.app import App
    from config.settings import load_settings

    settings = load_settings(
        chat_model="openai:chat-model",
        summary_model="anthropic:summary-model",
        window_exchanges=2,
        fold_batch=2,
        topic_detection="off",
    )
    chat = ScriptedChatModel(name="chat")
    summary = ScriptedChatModel(
        name="summary",
        default="Resumen: el usuario hizo varias preguntas sobre su pedido y el asistente "
        "respondió a cada una con detalle; no quedan temas pendientes por ahora.",
    )
    app = await App.build(settings, db=tmp_path / "two.db", chat_model=chat, summary_model=summary)
    try:
        for i in range(6):
            await app.handler.handle(
                inbound("console:two", f"pregunta número {i} sobre el pedido")
            )
            await app.folds.drain()
    finally:
        await app.aclose()
    assert summary.requests
    assert {r.purpose for r in summary.requests} == {"fold"}
    assert {r.purpose for r in chat.requests} == {"chat"}


async def test_redelivery_resumes_an_entry_whose_intake_was_interrupted(
    make_app: MakeApp,
) -> None:
    """An unfinished inbox entry nobody is working on is answered when redelivered."""
    model = ScriptedChatModel()
    app = await make_app(model)
    msg = inbound("telegram:8", "hola", ext="upd-1")
    # The first delivery committed its row, then its caller was cancelled before queueing.
    await app.store.inbox_add(str(msg.key), msg.external_id, msg.user, "text", msg.text, msg.ts)
    replies = await app.handler.handle(msg)
    assert len(replies) == 1
    assert len(model.requests) == 1
    assert await app.handler.handle(msg) == []  # now done: a true duplicate
    assert len(await app.store.all_exchanges("telegram:8")) == 1


async def test_state_read_at_intake_is_used_only_for_an_idle_chat(make_app: MakeApp) -> None:
    """A message queued behind another of the same chat does not use its intake's state:
    its turn gets the state the earlier exchange left (carried, no read), that exchange in
    its window."""
    release = asyncio.Event()

    async def on_call(request: ChatRequest) -> None:
        if request.messages[-1].content == "uno":
            await release.wait()

    model = ScriptedChatModel(on_call=on_call)
    app = await make_app(model)
    reads: list[str] = []
    read = app.store.db.read  # the store keeps the intake's state: count its own reads

    async def counting(fn: Any) -> object:
        if getattr(fn, "func", None) is sqlite_turns.peek_state:
            reads.append(fn.keywords["key"])
        return await read(fn)

    app.store.db.read = counting  # type: ignore[attr-defined]
    # Both arrive at once: both intakes start while the chat is idle and run in one batch.
    first, second = await asyncio.gather(
        app.handler.submit(inbound("console:s", "uno")),
        app.handler.submit(inbound("console:s", "dos")),
    )
    assert first
    assert second
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), timeout=5)
    assert reads == [], "the queued message's state is the one the first exchange carried"
    second_request = model.requests[-1]
    assert [m.content for m in second_request.messages][-3:-1] == ["uno", "ok 1"]


async def test_one_chat_cannot_queue_past_the_cap(make_app: MakeApp) -> None:
    """With 3 waiting, more messages of that chat are recorded as rejected (over_queue_cap),
    not answered; the user is told to slow down once per burst, at once; other chats and
    everything already queued are answered; the next burst is told again."""
    gate = asyncio.Event()
    model = ScriptedChatModel(gate=gate)
    app = await make_app(model, max_queued_per_chat=3, topic_detection="off")
    sent: list[str] = []
    app.handler.register("console", Collect(sent))
    futures = [
        await app.handler.submit(inbound("console:q", f"Q{i}", ext=f"q{i}")) for i in range(9)
    ]
    assert all(f is not None for f in futures)
    assert sent == [t("es", "slow_down", count=3)]  # one notice, before any reply
    rejected = await app.store.inbox_get("console:q", "q8")
    assert rejected is not None
    assert rejected.status == "rejected"
    other = await app.handler.submit(inbound("console:o", "O1"))
    assert other is not None
    gate.set()
    await app.handler.drain()
    stored = [e.user_text for e in await app.store.all_exchanges("console:q")]
    assert stored == ["Q0", "Q1", "Q2", "Q3"]  # one running and three waiting
    assert [e.user_text for e in await app.store.all_exchanges("console:o")] == ["O1"]
    assert sent.count(t("es", "slow_down", count=3)) == 1
    gate.clear()
    for i in range(9, 14):
        await app.handler.submit(inbound("console:q", f"Q{i}", ext=f"q{i}"))
    assert sent.count(t("es", "slow_down", count=3)) == 2  # a new burst, told again
    gate.set()
    await app.handler.drain()
    assert app.handler.intake.slowed == set()  # nothing kept once the queue is empty
