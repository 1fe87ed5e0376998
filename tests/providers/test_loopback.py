"""The OpenAI adapter over real sockets, against a loopback server standing in for Ollama."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from config.specs import parse_spec
from providers.base import RateLimited
from providers.factory import LOCAL_PLACEHOLDER_KEY, ProviderCredentials, build_chat_model
from tests.support.processes.model_api import FakeModel, Scripted
from tests.support.provider_api import REQUEST, RecordingSleep, golden


@pytest.fixture
async def http_client() -> AsyncIterator[httpx2.AsyncClient]:
    # trust_env=False: a proxy set in the environment must not capture loopback traffic.
    async with httpx2.AsyncClient(trust_env=False) as client:
        yield client


async def test_openai_adapter_talks_to_a_real_local_server(
    http_client: httpx2.AsyncClient,
) -> None:
    """Through base_url and a real socket: path, placeholder key, body and reply all line up."""
    server = FakeModel([Scripted(200, golden("ollama_completion"))])
    with server.server:
        creds = ProviderCredentials(openai_base_url=server.base_url)
        model = build_chat_model(parse_spec("openai:llama3.2"), creds, http_client=http_client)
        reply = await model.complete(REQUEST)
    assert (reply.text, reply.model, reply.stop_reason) == ("ok", "llama3.2", "end")
    [received] = server.received
    assert (received.method, received.path) == ("POST", "/v1/chat/completions")
    assert received.headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    assert received.body["model"] == "llama3.2"
    assert received.body["max_tokens"] == 300
    assert received.body["messages"][0] == {"role": "system", "content": REQUEST.system}


async def test_retry_after_over_a_real_socket(http_client: httpx2.AsyncClient) -> None:
    """A real 429 with retry-after is waited out (injected sleep), then the retry succeeds."""
    limited = Scripted(429, golden("openai_rate_limit"), {"Retry-After": "2"})
    sleep = RecordingSleep()
    server = FakeModel([limited, Scripted(200, golden("ollama_completion"))])
    with server.server:
        creds = ProviderCredentials(openai_base_url=server.base_url)
        spec = parse_spec("openai:llama3.2")
        model = build_chat_model(spec, creds, http_client=http_client, sleep=sleep)
        reply = await model.complete(REQUEST)
    assert reply.text == "ok"
    assert sleep.delays == [2.0]
    assert len(server.received) == 2
    assert server.unexpected == []


async def test_rate_limit_error_over_a_real_socket(http_client: httpx2.AsyncClient) -> None:
    """When every try is limited the caller gets RateLimited with the server's wait."""
    limited = Scripted(429, golden("openai_rate_limit"), {"Retry-After": "1"})
    sleep = RecordingSleep()
    server = FakeModel([limited, limited, limited])
    with server.server:
        creds = ProviderCredentials(openai_base_url=server.base_url)
        spec = parse_spec("openai:llama3.2")
        model = build_chat_model(spec, creds, http_client=http_client, sleep=sleep)
        with pytest.raises(RateLimited) as caught:
            await model.complete(REQUEST)
    assert caught.value.retry_after == 1.0
    assert sleep.delays == [1.0, 1.0]
