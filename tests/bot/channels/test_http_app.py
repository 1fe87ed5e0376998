"""The HTTP routes: health, routes per configured channel, Telegram pass-through, body cap."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.channels.http import MAX_BODY, build_http_app
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import FakeGraph
from tests.support.whatsapp_rig import WhatsAppRig

pytestmark = pytest.mark.usefixtures("clean_env")


class FakeTelegram:
    """Records webhook calls and answers a fixed status."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.calls: list[tuple[bytes, str | None]] = []

    async def handle_webhook(self, body: bytes, secret_header: str | None) -> int:
        self.calls.append((body, secret_header))
        return self.status


class DeadStore:
    async def ping(self) -> bool:
        raise OSError("database is locked")


def client_for(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ventana")


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[WhatsAppRig]:
    graph = FakeGraph()
    opened = await WhatsAppRig.open(tmp_path / "v.db", graph, ScriptedChatModel(reply=respuesta))
    yield opened
    await opened.aclose()
    await graph.client.aclose()
    assert graph.unexpected == []


async def test_healthz_fails_when_the_database_does_not_answer() -> None:
    """503 with ok false when ping raises."""
    async with client_for(build_http_app(DeadStore().ping)) as client:
        response = await client.get("/healthz")
    assert (response.status_code, response.json()) == (503, {"ok": False})


async def test_only_configured_channels_have_routes(rig: WhatsAppRig) -> None:
    """Without channels only /healthz exists."""
    async with client_for(build_http_app(rig.app.store.ping)) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.post("/whatsapp/webhook", content=b"{}")).status_code == 404
        assert (await client.post("/telegram/webhook", content=b"{}")).status_code == 404


async def test_telegram_route_passes_body_and_secret(rig: WhatsAppRig) -> None:
    """The raw body and the secret-token header reach the channel; its status comes back."""
    telegram = FakeTelegram(status=403)
    http = build_http_app(rig.app.store.ping, telegram=telegram)
    async with client_for(http) as client:
        response = await client.post(
            "/telegram/webhook",
            content=b'{"update_id": 1}',
            headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"},
        )
    assert response.status_code == 403
    assert telegram.calls == [(b'{"update_id": 1}', "s3cret")]


async def test_oversized_bodies_are_refused(rig: WhatsAppRig) -> None:
    """More than 1 MiB is refused with 413 before any check or parsing."""
    telegram = FakeTelegram()
    http = build_http_app(rig.app.store.ping, whatsapp=rig.channel, telegram=telegram)
    big = b"x" * (MAX_BODY + 1)
    async with client_for(http) as client:
        assert (await client.post("/whatsapp/webhook", content=big)).status_code == 413
        assert (await client.post("/telegram/webhook", content=big)).status_code == 413
    assert telegram.calls == []


async def test_wrong_methods_are_refused(rig: WhatsAppRig) -> None:
    """Only GET/POST on the WhatsApp webhook, only GET on /healthz."""
    assert (await rig.client.put("/whatsapp/webhook")).status_code == 405
    assert (await rig.client.post("/healthz")).status_code == 405
