"""The WhatsApp channel end to end: signed webhook in, one model call, Graph API reply out."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import structlog

from bot.channels.whatsapp.later import BACKGROUND_RETRIES
from bot.conversation.texts import t
from providers.base import ChatReply, ChatRequest
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import (
    ACCESS_TOKEN,
    LUCIA,
    TOMAS,
    VERIFY_TOKEN,
    FakeGraph,
    count_rows,
    golden,
    golden_json,
    graph_error,
    inbox_statuses,
)
from tests.support.whatsapp_rig import WhatsAppRig


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ventana.db"


@pytest.fixture
def model() -> ScriptedChatModel:
    return ScriptedChatModel(reply=respuesta)


@pytest.fixture
async def rig(db: Path, graph: FakeGraph, model: ScriptedChatModel) -> AsyncIterator[WhatsAppRig]:
    opened = await WhatsAppRig.open(db, graph, model)
    yield opened
    await opened.aclose()


def text_payload(body: str, *, wamid: str = "wamid.TEST1", wa_id: str = "5491155550101") -> bytes:
    data = golden_json("text.json")
    message = data["entry"][0]["changes"][0]["value"]["messages"][0]
    message.update({"id": wamid, "from": wa_id, "text": {"body": body}})
    return json.dumps(data).encode()


def reply_to(text: str) -> str:
    return f"Respuesta a «{text}»"


class GatedModel:
    """Answers only once `gate` is set: shows what happens while a turn is in flight."""

    name = "gated"

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.called = asyncio.Event()

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.called.set()
        await self.gate.wait()
        return ChatReply("listo")


# -- intake ------------------------------------------------------------------------------


async def test_text_gets_one_model_call_and_one_reply(
    rig: WhatsAppRig, graph: FakeGraph, model: ScriptedChatModel, db: Path
) -> None:
    """A text message: 200, one chat call with the message, one reply posted to the sender."""
    response = await rig.post(golden("text.json"))
    assert response.status_code == 200
    await rig.settle()
    [call] = model.chat_calls
    assert call.messages[-1].content == "Hola, ¿me ayudas con mi pedido #4821?"
    assert graph.texts_to(LUCIA) == [reply_to("Hola, ¿me ayudas con mi pedido #4821?")]
    assert count_rows(db, "exchanges") == 1


async def test_acknowledged_before_processing(db: Path, graph: FakeGraph) -> None:
    """200 comes back fast while the model is still busy, with the message already durable."""
    model = GatedModel()
    rig = await WhatsAppRig.open(db, graph, model)
    try:
        started = time.monotonic()
        response = await rig.post(golden("text.json"))
        assert response.status_code == 200
        assert time.monotonic() - started < 1.0
        assert count_rows(db, "inbox") == 1
        assert graph.requests == []
        model.gate.set()
        await rig.settle()
        assert graph.texts_to(LUCIA) == ["listo"]
    finally:
        await rig.aclose()


async def test_verification_handshake(rig: WhatsAppRig) -> None:
    """GET echoes the challenge for the right token and mode, 403 otherwise."""
    ok = {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "8125"}
    response = await rig.client.get("/whatsapp/webhook", params=ok)
    assert (response.status_code, response.text) == (200, "8125")
    for bad in ({**ok, "hub.verify_token": "wrong"}, {**ok, "hub.mode": "unsubscribe"}):
        response = await rig.client.get("/whatsapp/webhook", params=bad)
        assert (response.status_code, response.text) == (403, "")


@pytest.mark.parametrize(
    ("body", "signature", "status"),
    [
        ("text.json", None, 401),
        ("text.json", "sha256=" + "0" * 64, 403),
        ("text.json", "garbage", 403),
    ],
)
async def test_refused_posts_store_nothing(
    rig: WhatsAppRig,
    graph: FakeGraph,
    model: ScriptedChatModel,
    db: Path,
    body: str,
    signature: str | None,
    status: int,
) -> None:
    """Unsigned 401, badly signed 403: no row, no model call, no reply."""
    response = await rig.post(golden(body), signature=signature)
    assert response.status_code == status
    await rig.settle()
    assert count_rows(db, "inbox") == count_rows(db, "exchanges") == 0
    assert model.requests == []
    assert graph.requests == []


def rejected_rows(db: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        sql = "SELECT session_key, reason FROM inbox WHERE status = 'rejected' ORDER BY id"
        return [(str(key), str(reason)) for key, reason in conn.execute(sql)]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (golden("malformed.json"), "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),  # RecursionError in json.loads
    ],
)
async def test_signed_malformed_bodies_are_acknowledged_and_rejected(
    rig: WhatsAppRig, model: ScriptedChatModel, db: Path, body: bytes, reason: str
) -> None:
    """Broken, non-object or 100,000-deep JSON: 200, one rejected row with its reason, once."""
    assert (await rig.post(body)).status_code == 200
    assert (await rig.post(body)).status_code == 200  # Meta's redelivery: recorded once
    await rig.settle()
    assert rejected_rows(db) == [("whatsapp:unknown", reason)]
    assert await rig.app.store.inbox_unfinished() == []
    assert model.requests == []


async def test_a_message_without_a_valid_sender_is_rejected(
    rig: WhatsAppRig, model: ScriptedChatModel, db: Path
) -> None:
    """A message item whose `from` is not a phone number is recorded as rejected, not run."""
    payload = golden_json("text.json")
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["from"] = {"id": "abc"}
    await rig.deliver(json.dumps(payload).encode())
    assert rejected_rows(db) == [("whatsapp:unknown", "from is not a WhatsApp id")]
    assert model.requests == []


async def test_image_gets_a_short_text_only_reply(
    rig: WhatsAppRig, graph: FakeGraph, model: ScriptedChatModel
) -> None:
    """An image is answered with the 'text only' notice and never reaches the model."""
    await rig.deliver(golden("image.json"))
    assert model.requests == []
    assert graph.texts_to(LUCIA) == [t("es", "only_text")]


async def test_status_callbacks_are_accepted_silently(
    rig: WhatsAppRig, graph: FakeGraph, model: ScriptedChatModel, db: Path
) -> None:
    """Delivered/read statuses: 200, nothing stored, nothing sent."""
    await rig.deliver(golden("status.json"))
    assert count_rows(db, "inbox") == 0
    assert model.requests == []
    assert graph.requests == []


async def test_failed_status_is_logged(rig: WhatsAppRig, graph: FakeGraph) -> None:
    """A failed delivery (131047) is logged with its code; no reply is attempted."""
    with structlog.testing.capture_logs() as logs:
        assert (await rig.post(golden("status_failed.json"))).status_code == 200
    [event] = [e for e in logs if e["event"] == "whatsapp_delivery_failed"]
    assert (event["key"], event["codes"]) == (LUCIA, [131047])
    assert graph.requests == []


async def test_batched_payload_answers_each_in_chat_order(
    rig: WhatsAppRig, graph: FakeGraph, model: ScriptedChatModel
) -> None:
    """Several entries and messages: every message answered, each chat in arrival order."""
    await rig.deliver(golden("batched.json"))
    assert len(model.chat_calls) == 4
    assert graph.texts_to(LUCIA) == [reply_to("uno"), reply_to("dos"), reply_to("tres")]
    assert graph.texts_to(TOMAS) == [reply_to("hola desde Madrid")]


async def test_commands_arrive_as_text(
    db: Path, graph: FakeGraph, model: ScriptedChatModel
) -> None:
    """`/debug on` works for an operator listed by phone and is refused to anyone else."""
    rig = await WhatsAppRig.open(db, graph, model, operators=(LUCIA,))
    try:
        await rig.post(text_payload("/debug on", wamid="wamid.D1"))
        await rig.post(text_payload("/debug on", wamid="wamid.D2", wa_id="34600111222"))
        await rig.settle()
    finally:
        await rig.aclose()
    assert graph.texts_to(LUCIA) == [t("es", "debug_on")]
    assert graph.texts_to(TOMAS) == [t("es", "not_operator")]
    assert model.requests == []


# -- idempotence and recovery ------------------------------------------------------------


async def test_redelivery_after_restart_is_ignored(db: Path, graph: FakeGraph) -> None:
    """Meta redelivers after a restart: no second history row, model call or reply."""
    first = ScriptedChatModel(reply=respuesta)
    rig = await WhatsAppRig.open(db, graph, first)
    await rig.post(golden("text.json"))
    await rig.settle()
    await rig.aclose()
    assert (len(first.chat_calls), len(graph.requests), count_rows(db, "exchanges")) == (1, 1, 1)

    second = ScriptedChatModel(reply=respuesta)
    rig = await WhatsAppRig.open(db, graph, second)
    try:
        await rig.deliver(golden("text.json"))
    finally:
        await rig.aclose()
    assert second.requests == []
    assert len(graph.requests) == 1
    assert count_rows(db, "exchanges") == 1


async def test_redelivery_in_the_same_run_is_ignored(
    rig: WhatsAppRig, graph: FakeGraph, model: ScriptedChatModel
) -> None:
    """The same wamid twice in a row is answered once."""
    for _ in range(2):
        await rig.deliver(golden("text.json"))
    assert (len(model.chat_calls), len(graph.requests)) == (1, 1)


async def test_acknowledged_message_survives_a_crash(db: Path, graph: FakeGraph) -> None:
    """Stopped mid-turn after the 200: the next start answers it, exactly once."""
    stuck = GatedModel()
    rig = await WhatsAppRig.open(db, graph, stuck)
    assert (await rig.post(golden("text.json"))).status_code == 200
    await asyncio.wait_for(stuck.called.wait(), 5)
    await rig.aclose()  # cancels the turn in flight
    assert graph.requests == []

    model = ScriptedChatModel(reply=respuesta)
    await WhatsAppRig.restart(db, graph, model)
    assert len(model.chat_calls) == 1
    assert graph.texts_to(LUCIA) == [reply_to("Hola, ¿me ayudas con mi pedido #4821?")]


# -- delivery ----------------------------------------------------------------------------


def long_reply() -> str:
    words = ["pedido", "envío", "factura", "dirección", "plazo", "almacén", "transporte"]
    sentences = [
        f"El paso {i} revisa {words[i % 7]} y {words[(i * 3) % 7]} con el código #{4800 + i}."
        for i in range(220)
    ]
    return "\n\n".join(" ".join(sentences[i : i + 10]) for i in range(0, 220, 10))


async def test_long_reply_is_split(db: Path, graph: FakeGraph) -> None:
    """A reply over 4096 characters goes out in several messages, each at most 4096."""
    text = long_reply()
    assert len(text) > 2 * 4096
    rig = await WhatsAppRig.open(db, graph, ScriptedChatModel(reply=lambda _: text))
    try:
        await rig.post(golden("text.json"))
        await rig.settle()
    finally:
        await rig.aclose()
    chunks = graph.texts_to(LUCIA)
    assert len(chunks) >= 3
    assert all(len(chunk) <= 4096 for chunk in chunks)
    assert all(chunk.endswith(".") for chunk in chunks)  # cut at sentence ends
    assert " ".join(c.replace("\n\n", " ") for c in chunks) == text.replace("\n\n", " ")


async def test_outside_window_is_not_retried(rig: WhatsAppRig, graph: FakeGraph, db: Path) -> None:
    """131047 from the Graph API: logged, one attempt, and the entry is finished."""
    graph.script = [graph_error("outside_window")]
    with structlog.testing.capture_logs() as logs:
        await rig.post(golden("text.json"))
        await rig.settle()
    assert len(graph.requests) == 1
    assert rig.sleeps == []
    assert any(e["event"] == "whatsapp_outside_window" for e in logs)
    assert inbox_statuses(db) == ["done"]


async def test_throttled_send_backs_off_then_delivers(rig: WhatsAppRig, graph: FakeGraph) -> None:
    """HTTP 429 twice: retried after growing delays, delivered once; the token stays unlogged."""
    graph.script = [httpx.Response(429), graph_error("rate_limited")]
    with structlog.testing.capture_logs() as logs:
        await rig.post(golden("text.json"))
        await rig.settle()
    assert rig.sleeps == [1.0, 2.0]
    assert len(graph.requests) == 3
    assert len(graph.texts_to(LUCIA)) == 3  # the same reply, attempted three times
    assert ACCESS_TOKEN not in repr(logs)


async def test_undelivered_reply_is_sent_after_restart(db: Path, graph: FakeGraph) -> None:
    """Throttled past every retry: the stored reply goes out on the next start, no new call."""
    attempts = 1 + 1 + BACKGROUND_RETRIES  # inline, then in the background
    graph.script = [httpx.Response(429) for _ in range(attempts)]
    first = ScriptedChatModel(reply=respuesta)
    rig = await WhatsAppRig.open(db, graph, first)
    try:
        await rig.post(golden("text.json"))
        await rig.settle()
    finally:
        await rig.aclose()
    assert inbox_statuses(db) == ["answered"]

    second = ScriptedChatModel(reply=respuesta)
    await WhatsAppRig.restart(db, graph, second)
    assert second.requests == []
    assert len(graph.requests) == attempts + 1
    assert graph.texts_to(LUCIA)[-1] == reply_to("Hola, ¿me ayudas con mi pedido #4821?")
    assert inbox_statuses(db) == ["done"]
    assert len(first.chat_calls) == 1


# -- health ------------------------------------------------------------------------------


async def test_healthz(rig: WhatsAppRig) -> None:
    """/healthz answers 200 with ok while the database answers."""
    response = await rig.client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"ok": True})
