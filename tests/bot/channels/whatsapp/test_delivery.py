"""A slow or hung Graph API: short send timeouts, retries in the background, nothing lost."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from bot.app import App
from bot.channels.http import build_http_app
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.channels.whatsapp.graph import GraphSender, SendFailed
from bot.channels.whatsapp.webhook import sign
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import (
    ACCESS_TOKEN,
    APP_SECRET,
    LUCIA,
    PHONE_ID,
    FakeGraph,
    golden_json,
    inbox_statuses,
    make_settings,
)


def message(n: int, text: str) -> bytes:
    payload = golden_json("text.json")
    item = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    item.update(id=f"wamid.{n}", text={"body": text})
    return json.dumps(payload).encode()


class Gate:
    """A sleep that blocks until opened: the background retry waits for the test."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.waits: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.waits.append(delay)
        await self.open.wait()


async def test_a_hung_send_does_not_hold_the_chats_next_message(tmp_path: Path) -> None:
    """The first send times out: the next message is answered meanwhile; both replies then
    arrive in order and only then are both inbox entries done."""
    db = tmp_path / "v.db"
    timed_out = httpx.ReadTimeout("timed out")

    def hang(request: httpx.Request) -> httpx.Response:
        raise timed_out  # what a hung Graph API gives after the send timeout

    graph, model, gate = FakeGraph([hang]), ScriptedChatModel(reply=respuesta), Gate()
    app = await App.build(make_settings(db), chat_model=model, summary_model=OfflineChatModel())
    channel = WhatsAppChannel(app.handler, app.settings, http_client=graph.client, sleep=gate)
    http = httpx.ASGITransport(app=build_http_app(app.store.ping, whatsapp=channel))
    try:
        async with httpx.AsyncClient(transport=http, base_url="http://ventana") as client:
            for n, text in enumerate(("primero", "segundo")):
                body = message(n, text)
                headers = {"X-Hub-Signature-256": sign(APP_SECRET.encode(), body)}
                response = await client.post("/whatsapp/webhook", content=body, headers=headers)
                assert response.status_code == 200
            async with asyncio.timeout(5):  # the second turn ran and its reply is stored
                while inbox_statuses(db) != ["answered", "answered"]:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            assert len(model.chat_calls) == 2
            assert len(graph.requests) == 1  # the second reply waits behind the first
            gate.open.set()
            await asyncio.wait_for(app.handler.drain(), 5)
    finally:
        await app.aclose()
        await channel.stop()
        await graph.client.aclose()
    first, second = "Respuesta a «primero»", "Respuesta a «segundo»"
    assert graph.texts_to(LUCIA) == [first, first, second]  # the timed-out try, then in order
    assert inbox_statuses(db) == ["done", "done"]
    assert gate.waits == [1.0]


async def test_stopping_while_retrying_leaves_the_entry_for_the_next_start(
    tmp_path: Path,
) -> None:
    """Shutdown during a background retry: the reply is not marked done (resent at start)."""
    db = tmp_path / "v.db"

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    graph, gate = FakeGraph([refuse]), Gate()
    app = await App.build(
        make_settings(db),
        chat_model=ScriptedChatModel(reply=respuesta),
        summary_model=OfflineChatModel(),
    )
    channel = WhatsAppChannel(app.handler, app.settings, http_client=graph.client, sleep=gate)
    body = message(1, "hola")
    try:
        status = await channel.handle_post(body, sign(APP_SECRET.encode(), body))
        assert status == 200
        async with asyncio.timeout(5):
            while not gate.waits:  # noqa: ASYNC110 - the background retry has begun
                await asyncio.sleep(0.01)
        await channel.stop()
        await asyncio.wait_for(app.handler.drain(), 5)
    finally:
        await app.aclose()
        await graph.client.aclose()
    assert inbox_statuses(db) == ["answered"]


@pytest.fixture
async def hung_server() -> AsyncIterator[str]:
    """A loopback server that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v21.0"
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


async def test_a_hung_graph_api_costs_one_short_timeout(hung_server: str) -> None:
    """Against a server that never answers, one attempt gives up after its timeout."""
    async with httpx.AsyncClient(trust_env=False) as client:
        sender = GraphSender(
            client,
            graph_url=hung_server,
            phone_number_id=PHONE_ID,
            token=ACCESS_TOKEN,
            timeout=httpx.Timeout(0.3),
        )
        start = time.monotonic()
        with pytest.raises(SendFailed):
            await sender.send_chunk("5491155550101", "hola", retries=0)
        assert time.monotonic() - start < 1.5
