"""The SDKs never take keys, base URLs or organizations from the environment behind our back."""

from __future__ import annotations

import httpx2
import pytest

from config.specs import parse_spec
from providers.anthropic import AnthropicChatModel
from providers.base import ChatModel
from providers.factory import ProviderCredentials, build_chat_model
from providers.openai import OpenAIChatModel
from tests.support.provider_api import ANTHROPIC, OPENAI, REQUEST, FakeAPI, MakeAPI, answer

BOGUS = "bogus-from-environment"


async def sent_by(model: ChatModel, api: FakeAPI) -> httpx2.Request:
    """The one request `model` sends for `REQUEST`."""
    await model.complete(REQUEST)
    return api.requests[0]


def _assert_nothing_from_env(request: httpx2.Request) -> None:
    assert all(BOGUS not in value for value in request.headers.values())


@pytest.fixture
def hostile_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
    ):
        monkeypatch.setenv(name, BOGUS)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://env.invalid")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")


@pytest.mark.usefixtures("hostile_env")
async def test_anthropic_uses_only_what_it_was_given(fake_api: MakeAPI) -> None:
    """ANTHROPIC_API_KEY/AUTH_TOKEN/BASE_URL in the environment change nothing."""
    api = fake_api("POST", ANTHROPIC.path, answer(200, "anthropic_message"))
    model = AnthropicChatModel("claude-sonnet-4-6", api_key="sk-ant-ours", http_client=api.client)
    sent = await sent_by(model, api)
    assert sent.url.host == "api.anthropic.com"
    # This SDK version sends the key as a bearer token; older ones used x-api-key.
    key = sent.headers.get("x-api-key") or sent.headers["authorization"].removeprefix("Bearer ")
    assert key == "sk-ant-ours"
    _assert_nothing_from_env(sent)


@pytest.mark.usefixtures("hostile_env")
async def test_openai_uses_only_what_it_was_given(fake_api: MakeAPI) -> None:
    """OPENAI_API_KEY/BASE_URL/ORG_ID/PROJECT_ID in the environment change nothing."""
    api = fake_api("POST", OPENAI.path, answer(200, "openai_completion"))
    model = OpenAIChatModel("gpt-4.1-mini", api_key="sk-ours", http_client=api.client)
    sent = await sent_by(model, api)
    assert sent.url.host == "api.openai.com"
    assert sent.headers["authorization"] == "Bearer sk-ours"
    assert "openai-organization" not in sent.headers
    assert "openai-project" not in sent.headers
    _assert_nothing_from_env(sent)


@pytest.mark.usefixtures("hostile_env")
async def test_factory_sends_to_the_configured_base_url(fake_api: MakeAPI) -> None:
    """Credentials from our settings win over the SDK's own environment variables."""
    api = fake_api("POST", "/v1/chat/completions", answer(200, "openai_completion"))
    creds = ProviderCredentials(openai_api_key="sk-ours", openai_base_url="http://vllm.lan/v1")
    model = build_chat_model(parse_spec("openai:qwen3"), creds, http_client=api.client)
    sent = await sent_by(model, api)
    assert str(sent.url) == "http://vllm.lan/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-ours"
    _assert_nothing_from_env(sent)
