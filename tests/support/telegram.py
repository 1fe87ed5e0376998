"""A harness that wires python-telegram-bot, the real handler and a tmp SQLite database
to the fake Bot API (`bot_api.py`, through its in-process transport) and an echo model."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from telegram.request import HTTPXRequest

from bot.app import App
from bot.channels.telegram.channel import TelegramChannel
from config.settings import load_settings
from providers.offline import OfflineChatModel
from tests.support.bot_api import TOKEN, FakeBotAPI
from tests.support.fakes import ScriptedChatModel, echo

BASE_URL = "https://bot-api.test/bot"


@dataclass
class Harness:
    app: App
    channel: TelegramChannel
    fake: FakeBotAPI
    model: ScriptedChatModel

    async def wait_for(self, done: Callable[[], bool], within: float = 10.0) -> None:
        """Poll `done` until true; fail the test after `within` seconds."""
        async with asyncio.timeout(within):
            while not done():  # noqa: ASYNC110 - conditions span the fake, the DB, the model
                await asyncio.sleep(0.005)

    async def wait_replies(self, chat_id: int, count: int, within: float = 10.0) -> list[str]:
        await self.wait_for(lambda: len(self.fake.texts_to(chat_id)) >= count, within)
        return self.fake.texts_to(chat_id)

    async def exchanges(self, key: str) -> list[dict[str, Any]]:
        rows = (await self.app.store.export(key))["exchanges"]
        assert isinstance(rows, list)
        return rows


def settings_for(db: Path, **overrides: Any) -> Any:
    values: dict[str, Any] = {
        "db": db,
        "telegram_bot_token": TOKEN,
        "telegram_base_url": BASE_URL,
        "language": "en",
        "topic_detection": "off",
        "operators": ("telegram:1",),
        "chat_model": "offline",
        "summary_model": "offline",
    }
    values.update(overrides)
    return load_settings(**values)


def requests_for(fake: FakeBotAPI) -> tuple[HTTPXRequest, HTTPXRequest]:
    def make() -> HTTPXRequest:
        return HTTPXRequest(httpx_kwargs={"transport": fake.transport()})

    return make(), make()


@contextlib.asynccontextmanager
async def telegram_bot(
    db: Path,
    *,
    fake: FakeBotAPI | None = None,
    model: ScriptedChatModel | None = None,
    start: bool = True,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """A started channel on the fake API; on exit: stop, close, no unexpected calls."""
    fake = fake or FakeBotAPI()
    model = model or ScriptedChatModel(reply=echo, name="echo")
    app = await App.build(
        settings_for(db, **overrides), chat_model=model, summary_model=OfflineChatModel()
    )
    request, updates_request = requests_for(fake)
    channel = TelegramChannel(
        app.handler,
        app.settings,
        request=request,
        get_updates_request=updates_request,
        poll_timeout=1,
        retry_delay=0.01,
        drain_timeout=5,
    )
    harness = Harness(app, channel, fake, model)
    try:
        if start:
            await channel.start()
        yield harness
    finally:
        if channel.me is not None:
            await channel.stop()
        await app.aclose()
    assert fake.unexpected == [], f"unexpected Bot API methods: {fake.unexpected}"


def text_json(update: dict[str, Any]) -> bytes:
    return json.dumps(update).encode()
