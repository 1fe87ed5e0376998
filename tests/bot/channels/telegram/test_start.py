"""Starting Telegram: an unreachable Bot API is waited out; /healthz answers while polling."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx
import pytest
import structlog
from telegram.request import HTTPXRequest

from bot.app import App
from bot.channels.run import run_channels
from bot.channels.telegram.channel import TelegramChannel
from config.settings import load_settings
from providers.offline import OfflineChatModel
from tests.support.bot_api import TOKEN, FakeBotAPI
from tests.support.fakes import ScriptedChatModel, echo
from tests.support.telegram import settings_for
from tests.support.whatsapp import clear_env


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_env(monkeypatch, tmp_path)


class Unreachable(httpx.AsyncBaseTransport):
    """Refuses the first `refusals` connections, then hands requests to the fake API."""

    def __init__(self, fake: FakeBotAPI, refusals: int) -> None:
        self.inner = fake.transport()
        self.refusals = refusals

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.refusals > 0:
            self.refusals -= 1
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return await self.inner.handle_async_request(request)


async def test_an_unreachable_bot_api_at_start_is_retried_with_one_line_warnings(
    tmp_path: Path,
) -> None:
    """Refused twice, then 500 twice, then up: start succeeds and polls; warnings, no error."""
    fake = FakeBotAPI()
    for _ in range(2):
        fake.fail_next("getMe", 500, "Internal Server Error")
    app = await App.build(
        settings_for(tmp_path / "v.db"),
        chat_model=ScriptedChatModel(reply=echo),
        summary_model=OfflineChatModel(),
    )

    def request() -> HTTPXRequest:
        return HTTPXRequest(httpx_kwargs={"transport": Unreachable(fake, 2)})

    channel = TelegramChannel(
        app.handler,
        app.settings,
        request=request(),
        get_updates_request=request(),
        poll_timeout=1,
        retry_delay=0.01,
    )
    try:
        with structlog.testing.capture_logs() as logs:
            await asyncio.wait_for(channel.start(), 10)
            fake.push(fake.text(5, "hello"))
            async with asyncio.timeout(10):
                while fake.texts_to(5) != ["re: hello"]:  # noqa: ASYNC110 - the fake's state
                    await asyncio.sleep(0.01)
    finally:
        await channel.stop()
        await app.aclose()
    warnings = [e for e in logs if e["event"] == "telegram_unreachable"]
    assert len(warnings) == 4
    assert all(e["log_level"] == "warning" and e["call"] == "getMe" for e in warnings)
    assert TOKEN_PART not in repr(warnings)
    assert [e for e in logs if e["log_level"] == "error"] == []
    assert (
        fake.methods().count("getMe") == 3
    )  # two 500s, then the answer (refusals never got there)


TOKEN_PART = "TEST-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_healthz_answers_while_polling(tmp_path: Path) -> None:
    """Polling mode (no webhook) still serves GET /healthz on VENTANA_HTTP_HOST:PORT."""
    fake = FakeBotAPI()
    fake.server.start()
    port, ready = free_port(), asyncio.Event()
    settings = load_settings(
        db=tmp_path / "v.db",
        telegram_bot_token=TOKEN,
        telegram_base_url=fake.base_url(1),
        http_port=port,
        topic_detection="off",
    )
    task = asyncio.create_task(
        run_channels(
            settings,
            chat_model=ScriptedChatModel(reply=echo),
            summary_model=OfflineChatModel(),
            ready=ready,
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), 10)
        update = fake.push_text(5)  # its text names the update, and so does the echo
        async with httpx.AsyncClient(trust_env=False) as client:
            health = await client.get(f"http://127.0.0.1:{port}/healthz")
            assert (health.status_code, health.json()) == (200, {"ok": True})
            missing = await client.post(f"http://127.0.0.1:{port}/telegram/webhook", content=b"{}")
            assert missing.status_code == 404  # polling: no webhook route
        async with asyncio.timeout(10):
            while not fake.replies_to(update):  # noqa: ASYNC110 - the fake's threads
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        fake.server.stop()
    assert fake.unexpected == []
