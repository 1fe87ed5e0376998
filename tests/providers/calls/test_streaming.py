"""Streaming through both real SDKs against fake SSE endpoints."""

from __future__ import annotations

from collections.abc import Callable

import httpx2
import pytest

from providers.base import ChatReply, ChatRequest, Overloaded, ProviderUnavailable, Usage
from providers.offline import OfflineChatModel
from providers.streaming import StreamingChatModel, complete_streaming
from tests.support.provider_api import (
    ANTHROPIC,
    OPENAI,
    REQUEST,
    Flavor,
    MakeAPI,
    RecordingSleep,
    answer,
)
from tests.support.sse import anthropic_broken_stream, anthropic_stream, openai_stream


class Seen:
    """Records every text-so-far the model reported."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, text: str) -> None:
        self.texts.append(text)


@pytest.mark.parametrize(
    ("flavor", "body", "usage"),
    [
        pytest.param(ANTHROPIC, anthropic_stream, Usage(48, 12, 8), id="anthropic"),
        pytest.param(OPENAI, openai_stream, Usage(48, 12, 16), id="openai"),
    ],
)
async def test_stream_reports_growing_text_and_final_reply(
    fake_api: MakeAPI, flavor: Flavor, body: Callable[[list[str]], httpx2.Response], usage: Usage
) -> None:
    """Each delta arrives as the text so far; the reply carries text, usage and model."""
    api = fake_api("POST", flavor.path, body(["Hola", ", ", "mundo."]))
    model = flavor.build(api.client, RecordingSleep())
    seen = Seen()
    reply = await complete_streaming(model, REQUEST, seen)
    assert seen.texts == ["Hola", "Hola, ", "Hola, mundo."]
    assert reply.text == "Hola, mundo."
    assert reply.stop_reason == "end"
    assert reply.usage == usage
    assert reply.model
    assert api.body()["stream"] is True


async def test_openai_stream_asks_for_usage(fake_api: MakeAPI) -> None:
    """The OpenAI request sets stream_options.include_usage, so usage is reported."""
    api = fake_api("POST", OPENAI.path, openai_stream(["ok"]))
    await complete_streaming(OPENAI.build(api.client, RecordingSleep()), REQUEST, Seen())
    assert api.body()["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("flavor", [ANTHROPIC, OPENAI], ids=["anthropic", "openai"])
async def test_retry_before_first_chunk(fake_api: MakeAPI, flavor: Flavor) -> None:
    """A 529/503 before anything was shown is retried, then the stream is used."""
    busy = httpx2.Response(503, json={"error": {"type": "api_error", "message": "down"}})
    stream = anthropic_stream(["Sí."]) if flavor is ANTHROPIC else openai_stream(["Sí."])
    api = fake_api("POST", flavor.path, busy, stream)
    sleep = RecordingSleep()
    reply = await complete_streaming(flavor.build(api.client, sleep), REQUEST, Seen())
    assert reply.text == "Sí."
    assert len(api.requests) == 2
    assert len(sleep.delays) == 1


async def test_no_retry_once_text_was_shown(fake_api: MakeAPI) -> None:
    """An overload after the first chunk fails the reply instead of showing a second one."""
    api = fake_api("POST", ANTHROPIC.path, anthropic_broken_stream(["Empiezo"]))
    seen = Seen()
    with pytest.raises((Overloaded, ProviderUnavailable)):
        await complete_streaming(ANTHROPIC.build(api.client, RecordingSleep()), REQUEST, seen)
    assert seen.texts == ["Empiezo"]
    assert len(api.requests) == 1


async def test_model_without_stream_falls_back_to_complete() -> None:
    """A model with only `complete` still answers; nothing is streamed."""
    model = OfflineChatModel()
    assert not isinstance(model, StreamingChatModel)
    seen = Seen()
    reply = await complete_streaming(model, ChatRequest("", REQUEST.messages, 50), seen)
    assert isinstance(reply, ChatReply)
    assert reply.text
    assert seen.texts == []


async def test_openai_compatible_server_that_ignores_stream(fake_api: MakeAPI) -> None:
    """A server answering plain JSON to a stream request still gives the whole reply."""
    api = fake_api("POST", OPENAI.path, answer(200, "openai_completion"))
    seen = Seen()
    reply = await complete_streaming(OPENAI.build(api.client, RecordingSleep()), REQUEST, seen)
    assert reply.text
    assert seen.texts == [reply.text]
    assert reply.usage.input_tokens > 0
