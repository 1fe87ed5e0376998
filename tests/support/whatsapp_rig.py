"""An App on a database file with its WhatsApp channel and HTTP app, driven in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from bot.app import App
from bot.channels.http import build_http_app
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.channels.whatsapp.webhook import sign
from providers.base import ChatModel
from providers.offline import OfflineChatModel
from tests.support.whatsapp import APP_SECRET, FakeGraph, make_settings


class WhatsAppRig:
    """One App on a database file, its WhatsApp channel and the HTTP app, in process."""

    def __init__(self, app: App, graph: FakeGraph) -> None:
        self.app = app
        self.sleeps: list[float] = []
        self.channel = WhatsAppChannel(
            app.handler, app.settings, http_client=graph.client, sleep=self._sleep
        )
        transport = httpx.ASGITransport(app=build_http_app(app.store.ping, whatsapp=self.channel))
        self.client = httpx.AsyncClient(transport=transport, base_url="http://ventana")

    @classmethod
    async def open(
        cls, db: Path, graph: FakeGraph, model: ChatModel, **overrides: Any
    ) -> WhatsAppRig:
        """Build and start, as `ventana run` does (recovering unfinished entries)."""
        settings = make_settings(db, **overrides)
        app = await App.build(settings, chat_model=model, summary_model=OfflineChatModel())
        rig = cls(app, graph)
        await rig.channel.start()
        return rig

    @classmethod
    async def restart(cls, db: Path, graph: FakeGraph, model: ChatModel) -> None:
        """A next start on the same database: recover, settle, stop."""
        rig = await cls.open(db, graph, model)
        try:
            await rig.settle()
        finally:
            await rig.aclose()

    async def _sleep(self, delay: float) -> None:
        self.sleeps.append(delay)

    async def post(self, body: bytes, *, signature: str | None = "sign") -> httpx.Response:
        headers = {"Content-Type": "application/json"}
        if signature == "sign":
            signature = sign(APP_SECRET.encode(), body)
        if signature is not None:
            headers["X-Hub-Signature-256"] = signature
        return await self.client.post("/whatsapp/webhook", content=body, headers=headers)

    async def deliver(self, body: bytes) -> None:
        """Post a signed body as Meta does, expect its 200, and wait until it is handled."""
        assert (await self.post(body)).status_code == 200
        await self.settle()

    async def settle(self) -> None:
        """Wait until every queued turn has been answered and delivered."""
        await self.app.handler.drain()
        await self.app.folds.drain()

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.app.aclose()
        await self.channel.stop()
