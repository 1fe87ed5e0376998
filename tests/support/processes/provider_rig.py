"""The real OpenAI and Anthropic adapters inside a real `App`, over `httpx2.MockTransport`.

`fake_provider` is the one scripted endpoint (`tests/support/provider_api.FakeAPI`) on one
provider's route: scripted steps first (error answers, broken bodies, hangs), then a
normal reply naming the user's message. Any other request is recorded and fails the test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2

from bot.app import App
from config.settings import Settings, load_settings
from config.specs import parse_spec
from providers.base import ChatModel
from providers.factory import ProviderCredentials, build_chat_model
from providers.offline import OfflineChatModel
from providers.retry import Sleep
from tests.support.inbound import inbound as make_inbound
from tests.support.provider_api import FakeAPI, Flavor, Step

DEADLINE_S = 3.0
# The deadline bounds the model; the handler's own reads and writes add milliseconds.
HOUSEKEEPING_S = 0.25
CREDS = ProviderCredentials(anthropic_api_key="sk-ant-test", openai_api_key="sk-test")


def answer(response: httpx2.Response, headers: dict[str, str] | None = None) -> Step:
    async def step(_request: httpx2.Request) -> httpx2.Response:
        if headers:
            response.headers.update(headers)
        return response

    return step


async def hang(_request: httpx2.Request) -> httpx2.Response:
    """A server that accepted the request and never answers."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def read_timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


def fake_provider(
    flavor: Flavor, script: Iterable[Step] = (), forever: Step | None = None
) -> FakeAPI:
    """The flavor's endpoint: the script, then `forever`, and then replies that quote the
    user's last message."""
    return FakeAPI("POST", flavor.path, script, forever=forever or flavor.echo)


def settings_for(tmp: Path, chat: str, summary: str = "offline", **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "db": tmp / "ventana.db",
        "chat_model": chat,
        "summary_model": summary,
        "window_exchanges": 2,
        "fold_batch": 2,
        "topic_detection": "off",
        "language": "es",
        "reply_deadline_seconds": DEADLINE_S,
    }
    return load_settings(**(values | extra))


def adapter(spec: str, fake: FakeAPI, sleep: Sleep, deadline: float) -> ChatModel:
    return build_chat_model(
        parse_spec(spec), CREDS, http_client=fake.client, deadline=deadline, sleep=sleep
    )


@asynccontextmanager
async def app_with(
    settings: Settings, chat: ChatModel, summary: ChatModel | None = None
) -> AsyncIterator[App]:
    app = await App.build(settings, chat_model=chat, summary_model=summary or OfflineChatModel())
    try:
        yield app
    finally:
        await app.aclose()


class Chat:
    """Sends messages as one user and times every `handler.handle`."""

    def __init__(self, app: App, key: str = "telegram:7") -> None:
        self.app, self.key = app, key
        self.sent = 0
        self.durations: list[float] = []

    async def say(self, text: str) -> list[str]:
        self.sent += 1
        user = "telegram:" + self.key.rsplit(":", 1)[-1]
        inbound = make_inbound(self.key, text, f"m{self.sent}", user)
        started = time.monotonic()
        replies = await asyncio.wait_for(self.app.handler.handle(inbound), DEADLINE_S * 4)
        self.durations.append(time.monotonic() - started)
        assert self.durations[-1] < DEADLINE_S + HOUSEKEEPING_S, self.durations
        return replies

    async def noise_reasons(self) -> list[str | None]:
        return [x.noise_reason for x in await self.app.store.all_exchanges(self.key)]
