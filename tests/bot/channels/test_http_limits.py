"""The real HTTP server on a loopback port closes idle, slow and surplus clients in time.

Tiny deadlines (0.3 s) keep every test to about a second; the server is `ventana run`'s
own (the guarded uvicorn protocol in front of the WhatsApp webhook routes).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from bot.app import App
from bot.channels.http import build_http_app
from bot.channels.server import serving
from bot.channels.whatsapp.channel import WhatsAppChannel
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import FakeGraph, make_settings

DEADLINE = 0.3
HEAD = b"POST /whatsapp/webhook HTTP/1.1\r\nHost: ventana\r\n"


pytestmark = pytest.mark.usefixtures("clean_env")


class Server:
    def __init__(self, port: int, logs: list[dict[str, Any]]) -> None:
        self.port = port
        self.logs = logs

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)

    def events(self) -> list[str]:
        return [str(e["event"]) for e in self.logs]


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> float:
    """Seconds until the server closes the connection (EOF); fails past `seconds`."""
    start = time.monotonic()
    async with asyncio.timeout(seconds):
        while True:
            try:
                if not await reader.read(65536):
                    break
            except ConnectionResetError:
                break
    return time.monotonic() - start


@pytest.fixture
async def server(
    tmp_path: Path, port: int, caplog: pytest.LogCaptureFixture, request: pytest.FixtureRequest
) -> AsyncIterator[Server]:
    limits: dict[str, Any] = getattr(request, "param", {})
    values = {
        "http_port": port,
        "http_header_timeout_seconds": DEADLINE,
        "http_body_timeout_seconds": DEADLINE,
        "http_keepalive_seconds": DEADLINE,
    }
    settings = make_settings(tmp_path / "v.db", **(values | limits))
    graph = FakeGraph()
    app = await App.build(
        settings, chat_model=ScriptedChatModel(reply=respuesta), summary_model=OfflineChatModel()
    )
    channel = WhatsAppChannel(app.handler, settings, http_client=graph.client)
    caplog.set_level(logging.WARNING)
    try:
        with structlog.testing.capture_logs() as logs:
            async with serving(build_http_app(app.store.ping, whatsapp=channel), settings):
                yield Server(settings.http_port, logs)
                async with httpx.AsyncClient(trust_env=False) as client:  # still healthy
                    health = await client.get(f"http://127.0.0.1:{settings.http_port}/healthz")
                    assert health.status_code == 200
    finally:
        await app.aclose()
        await channel.stop()
        await graph.client.aclose()
    assert [e for e in logs if e["log_level"] in ("error", "critical")] == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_idle_connections_are_closed_after_the_header_deadline(server: Server) -> None:
    """Five clients that connect and send nothing are all closed within the deadline."""
    clients = [await server.connect() for _ in range(5)]
    waits = await asyncio.gather(*(closed_within(r, 3) for r, _ in clients))
    assert max(waits) < DEADLINE + 1
    assert "http_read_timeout" in server.events()
    for _, writer in clients:
        writer.close()


async def test_a_slowloris_dribbling_headers_is_cut_off(server: Server) -> None:
    """Headers sent a line every 50 ms never finish: closed at the header deadline anyway."""
    reader, writer = await server.connect()
    start = time.monotonic()
    writer.write(HEAD)

    async def dribble() -> None:
        for n in range(200):
            writer.write(f"X-Slow-{n}: y\r\n".encode())
            await asyncio.sleep(0.05)

    feeding = asyncio.create_task(dribble())
    await closed_within(reader, 3)
    feeding.cancel()
    await asyncio.wait({feeding})
    assert time.monotonic() - start < DEADLINE + 1
    writer.close()


async def test_a_body_that_never_completes_is_cut_off_quietly(server: Server) -> None:
    """Headers promise 1,000 bytes, 10 arrive: closed at the body deadline, no ERROR logged."""
    reader, writer = await server.connect()
    writer.write(HEAD + b"Content-Length: 1000\r\n\r\n" + b"0123456789")
    waited = await closed_within(reader, 3)
    assert waited < DEADLINE + 1
    await asyncio.sleep(0.05)
    assert "http_client_disconnected" in server.events()
    writer.close()


async def test_a_client_leaving_mid_body_is_logged_at_debug_only(server: Server) -> None:
    """A client that disconnects mid-body: a debug event, no ERROR traceback."""
    _, writer = await server.connect()
    writer.write(HEAD + b"Content-Length: 1000\r\n\r\n" + b"{")
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.close()
    await writer.wait_closed()
    for _ in range(50):
        if "http_client_disconnected" in server.events():
            break
        await asyncio.sleep(0.02)
    debug = [e for e in server.logs if e["event"] == "http_client_disconnected"]
    assert [e["log_level"] for e in debug] == ["debug"]


@pytest.mark.parametrize(
    "server", [{"http_max_connections": 3, "http_header_timeout_seconds": 5.0}], indirect=True
)
async def test_connections_over_the_cap_are_closed_at_once(server: Server) -> None:
    """With a cap of 3, a fourth connection is closed at once; the first three stay open."""
    held = [await server.connect() for _ in range(3)]
    await asyncio.sleep(0.05)
    reader, writer = await server.connect()
    assert await closed_within(reader, 1) < 0.5
    for r, w in held:
        assert not r.at_eof()
        w.close()
        await w.wait_closed()
    writer.close()
    await asyncio.sleep(0.1)  # the server sees the three go before the health check
