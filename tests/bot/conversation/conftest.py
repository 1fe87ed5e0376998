"""An App on a temporary database with a scripted chat model and the offline summarizer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.conversation.inbound import Inbound
from config.settings import load_settings
from memory.types import SessionKey
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel
from tests.support.inbound import inbound as make_inbound

_ids = count(1)
MakeApp = Callable[..., Awaitable[App]]


async def until_sent(sent: Sequence[str], polls: int = 300) -> None:
    """Wait (10 ms a poll) until something was sent: a retry or an apology lands later."""
    for _ in range(polls):
        if sent:
            return
        await asyncio.sleep(0.01)


def inbound(key: str, text: str, *, user: str | None = None, ext: str | None = None) -> Inbound:
    return make_inbound(key, text, ext or f"m{next(_ids)}", user)


@pytest.fixture
async def make_app(tmp_path: Path) -> AsyncIterator[MakeApp]:
    apps: list[App] = []

    async def build(model: Any = None, db: Path | None = None, **overrides: Any) -> App:
        settings = load_settings(**{"language": "es", **overrides})
        app = await App.build(
            settings,
            db=db or tmp_path / "bot.db",
            chat_model=model or ScriptedChatModel(),
            summary_model=OfflineChatModel(),
        )
        apps.append(app)
        return app

    yield build
    for app in apps:
        await app.aclose()


class Collect:
    """An outbox that keeps what it is given to send."""

    def __init__(self, sink: list[str]) -> None:
        self.sink = sink

    async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
        self.sink.extend(texts)

    def working(self, key: SessionKey) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()
