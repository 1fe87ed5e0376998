"""The OpenAI adapter through the real SDK against a scripted Chat Completions endpoint."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from providers.base import ChatRequest, Message, Usage
from providers.openai import OpenAIChatModel, default_token_param
from providers.retry import Sleep
from tests.support.provider_api import OPENAI, REQUEST, MakeAPI, answer

PATH = OPENAI.path


def model_for(
    client: httpx2.AsyncClient, base_url: str | None = None, sleep: Sleep = asyncio.sleep
) -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-4.1-mini", api_key="sk-test", base_url=base_url, http_client=client, sleep=sleep
    )


async def test_request_puts_system_first_and_uses_max_completion_tokens(
    fake_api: MakeAPI,
) -> None:
    """On api.openai.com the system prompt leads the messages and the cap is the modern field."""
    api = fake_api("POST", PATH, answer(200, "openai_completion"))
    await model_for(api.client).complete(REQUEST)
    assert api.body() == {
        "model": "gpt-4.1-mini",
        "max_completion_tokens": 300,
        "messages": [
            {"role": "system", "content": "Eres un asistente amable."},
            {"role": "user", "content": "Hola, ¿me ayudas con la masa madre?"},
            {"role": "assistant", "content": "¡Claro! ¿Qué necesitas?"},
            {"role": "user", "content": "¿Qué ingredientes?"},
        ],
    }
    assert str(api.requests[0].url) == "https://api.openai.com/v1/chat/completions"


async def test_compatible_server_gets_max_tokens(fake_api: MakeAPI) -> None:
    """With another base URL the body uses `max_tokens`, which compatible servers know."""
    api = fake_api("POST", "/api/v1/chat/completions", answer(200, "openai_completion"))
    await model_for(api.client, base_url="https://openrouter.ai/api/v1").complete(REQUEST)
    body = api.body()
    assert body["max_tokens"] == 300
    assert "max_completion_tokens" not in body
    assert api.requests[0].url.host == "openrouter.ai"


async def test_reply_text_usage_and_model(fake_api: MakeAPI) -> None:
    """Content, finish_reason 'stop', usage and the served model come back as ours."""
    api = fake_api("POST", PATH, answer(200, "openai_completion"))
    reply = await model_for(api.client).complete(REQUEST)
    assert reply.text == "¡Claro! Para la masa madre necesitas harina y agua."
    assert reply.stop_reason == "end"
    assert reply.usage == Usage(input_tokens=412, output_tokens=17)
    assert reply.model == "gpt-4.1-mini-2025-04-14"


async def test_length_finish_reason_is_max_tokens(fake_api: MakeAPI) -> None:
    """finish_reason 'length' becomes our 'max_tokens'."""
    api = fake_api("POST", PATH, answer(200, "openai_length"))
    reply = await model_for(api.client).complete(REQUEST)
    assert reply.stop_reason == "max_tokens"
    assert reply.text == "Resumen: el usuario prepara"


async def test_no_system_message_when_system_is_empty(fake_api: MakeAPI) -> None:
    """An empty system prompt sends no system message; same-role neighbours are merged."""
    api = fake_api("POST", PATH, answer(200, "openai_completion"))
    request = ChatRequest("", (Message("user", "a"), Message("user", "b")), max_tokens=20)
    await model_for(api.client).complete(request)
    assert api.body()["messages"] == [{"role": "user", "content": "a\n\nb"}]


async def test_missing_usage_counts_zero(fake_api: MakeAPI) -> None:
    """Some compatible servers send no usage; the reply still arrives."""
    body = {
        "id": "cmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "local",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
    }
    api = fake_api("POST", PATH, httpx2.Response(200, json=body))
    reply = await model_for(api.client).complete(REQUEST)
    assert (reply.text, reply.usage, reply.stop_reason) == ("hi", Usage(), "other")


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        (None, "max_completion_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("http://localhost:11434/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
    ],
)
def test_default_token_param(base_url: str | None, expected: str) -> None:
    """Only OpenAI's own endpoint gets `max_completion_tokens` by default."""
    assert default_token_param(base_url) == expected


async def test_aclose_leaves_an_injected_client_open(fake_api: MakeAPI) -> None:
    """The adapter does not close a client it was given."""
    api = fake_api("POST", PATH)
    await model_for(api.client).aclose()
    assert not api.client.is_closed


def test_empty_key_is_refused() -> None:
    """An empty key would let the SDK fall back to the environment, so it is refused."""
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4.1-mini", api_key="")
