"""The Anthropic adapter through the real SDK against a scripted Messages endpoint."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from providers.anthropic import AnthropicChatModel
from providers.base import ChatRequest, Message, Usage
from providers.retry import Sleep
from tests.support.provider_api import ANTHROPIC, REQUEST, MakeAPI, RecordingSleep, answer

PATH = ANTHROPIC.path


def model_for(client: httpx2.AsyncClient, sleep: Sleep = asyncio.sleep) -> AnthropicChatModel:
    return AnthropicChatModel(
        "claude-sonnet-4-6", api_key="sk-ant-test", http_client=client, sleep=sleep
    )


async def test_request_puts_system_apart_and_keeps_roles(fake_api: MakeAPI) -> None:
    """The body carries model, max_tokens, the system field and the turns in order."""
    api = fake_api("POST", PATH, answer(200, "anthropic_message"))
    await model_for(api.client).complete(REQUEST)
    assert api.body() == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 300,
        "system": "Eres un asistente amable.",
        "messages": [
            {"role": "user", "content": "Hola, ¿me ayudas con la masa madre?"},
            {"role": "assistant", "content": "¡Claro! ¿Qué necesitas?"},
            {"role": "user", "content": "¿Qué ingredientes?"},
        ],
    }
    assert api.requests[0].url.host == "api.anthropic.com"


async def test_reply_joins_text_blocks_and_counts_cached_input(fake_api: MakeAPI) -> None:
    """Text blocks are joined; input usage includes cache reads; end_turn is 'end'."""
    api = fake_api("POST", PATH, answer(200, "anthropic_message"))
    reply = await model_for(api.client).complete(REQUEST)
    assert reply.text == (
        "¡Claro! Para la masa madre necesitas harina y agua. Empieza con 50 g de cada una."
    )
    assert reply.stop_reason == "end"
    assert reply.usage == Usage(input_tokens=512, output_tokens=31, cached_tokens=100)
    assert reply.model == "claude-sonnet-4-6"


async def test_max_tokens_stop_reason_is_mapped(fake_api: MakeAPI) -> None:
    """stop_reason 'max_tokens' becomes our 'max_tokens'."""
    api = fake_api("POST", PATH, answer(200, "anthropic_max_tokens"))
    reply = await model_for(api.client).complete(REQUEST)
    assert reply.stop_reason == "max_tokens"
    assert reply.usage == Usage(input_tokens=1200, output_tokens=12)


async def test_same_role_neighbours_are_merged_and_blank_system_left_out(
    fake_api: MakeAPI,
) -> None:
    """Two user turns in a row become one; an empty system prompt is not sent."""
    api = fake_api("POST", PATH, answer(200, "anthropic_message"))
    request = ChatRequest(
        system="",
        messages=(Message("user", "uno"), Message("user", "dos"), Message("assistant", " ")),
        max_tokens=50,
    )
    await model_for(api.client).complete(request)
    body = api.body()
    assert "system" not in body
    assert body["messages"] == [{"role": "user", "content": "uno\n\ndos"}]


async def test_attempt_timeout_reaches_the_http_layer(fake_api: MakeAPI) -> None:
    """The per-attempt timeout is passed to the SDK for each request."""
    api = fake_api("POST", PATH, answer(200, "anthropic_message"))
    await model_for(api.client).complete(REQUEST)
    assert api.requests[0].extensions["timeout"]["read"] == pytest.approx(20.0)


async def test_sdk_does_not_retry_on_its_own(fake_api: MakeAPI, sleep: RecordingSleep) -> None:
    """A 500 is retried by our policy only: each retry goes through the injected sleep."""
    api = fake_api(
        "POST", PATH, answer(500, "anthropic_api_error"), answer(200, "anthropic_message")
    )
    await model_for(api.client, sleep=sleep).complete(REQUEST)
    assert len(api.requests) == 2
    assert sleep.delays == [0.5]
    assert api.requests[0].headers["x-stainless-retry-count"] == "0"


async def test_aclose_leaves_an_injected_client_open(fake_api: MakeAPI) -> None:
    """The adapter does not close a client it was given."""
    api = fake_api("POST", PATH)
    await model_for(api.client).aclose()
    assert not api.client.is_closed


async def test_aclose_closes_the_client_it_made() -> None:
    """Without an injected client the SDK's own one is closed (no request is made)."""
    model = AnthropicChatModel("claude-sonnet-4-6", api_key="sk-ant-test")
    await model.aclose()
    assert model._client.is_closed()


def test_empty_key_is_refused() -> None:
    """An empty key would let the SDK fall back to the environment, so it is refused."""
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        AnthropicChatModel("claude-sonnet-4-6", api_key="")
