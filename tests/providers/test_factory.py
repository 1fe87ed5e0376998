"""Building models from specs and credentials."""

from __future__ import annotations

import pytest

from config.specs import parse_spec
from providers.alerts import ReportingChatModel
from providers.anthropic import AnthropicChatModel
from providers.base import ChatModel
from providers.factory import (
    LOCAL_PLACEHOLDER_KEY,
    MissingCredentials,
    ProviderCredentials,
    build_chat_model,
    is_local_url,
)
from providers.offline import OfflineChatModel
from providers.openai import OpenAIChatModel
from tests.support.provider_api import ANTHROPIC, REQUEST, MakeAPI, answer


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
        ("openai:gpt-4.1-nano", "OPENAI_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(spec: str, variable: str) -> None:
    """A provider without its key is a clear error naming the variable to set."""
    with pytest.raises(MissingCredentials, match=variable) as caught:
        build_chat_model(parse_spec(spec), ProviderCredentials())
    assert caught.value.variable == variable
    assert isinstance(caught.value, ValueError)


def test_remote_openai_compatible_server_still_needs_a_key() -> None:
    """A public base URL (OpenRouter) without a key is refused."""
    creds = ProviderCredentials(openai_base_url="https://openrouter.ai/api/v1")
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        build_chat_model(parse_spec("openai:meta-llama/llama-3.3-70b"), creds)


async def test_local_server_runs_without_a_key(fake_api: MakeAPI) -> None:
    """A local base URL (Ollama) needs no key; a placeholder is sent instead."""
    api = fake_api("POST", "/v1/chat/completions", answer(200, "ollama_completion"))
    creds = ProviderCredentials(openai_base_url="http://localhost:11434/v1")
    model = build_chat_model(parse_spec("openai:llama3.2"), creds, http_client=api.client)
    reply = await model.complete(REQUEST)
    assert reply.text == "ok"
    assert api.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    assert api.body()["max_tokens"] == 300


@pytest.mark.parametrize(
    ("spec", "creds", "kind", "name"),
    [
        ("offline", ProviderCredentials(), OfflineChatModel, "offline"),
        (
            "anthropic:claude-sonnet-4-6",
            ProviderCredentials(anthropic_api_key="k"),
            AnthropicChatModel,
            "anthropic:claude-sonnet-4-6",
        ),
        (
            "openai:gpt-4.1-mini",
            ProviderCredentials(openai_api_key="k"),
            OpenAIChatModel,
            "openai:gpt-4.1-mini",
        ),
    ],
)
async def test_each_provider_builds_its_adapter(
    spec: str, creds: ProviderCredentials, kind: type[ChatModel], name: str
) -> None:
    """Each spec gives its adapter (a real one watched for failures), a ChatModel."""
    built = build_chat_model(parse_spec(spec), creds)
    model = built.inner if isinstance(built, ReportingChatModel) else built
    assert isinstance(model, kind)
    assert isinstance(built, ChatModel)
    assert built.name == name
    if isinstance(model, AnthropicChatModel | OpenAIChatModel):
        await model.aclose()


async def test_timeout_setting_reaches_each_attempt(fake_api: MakeAPI) -> None:
    """The factory's per-attempt timeout is what the HTTP layer gets."""
    api = fake_api("POST", ANTHROPIC.path, answer(200, "anthropic_message"))
    creds = ProviderCredentials(anthropic_api_key="k")
    spec = parse_spec("anthropic:claude-haiku-4-5")
    model = build_chat_model(spec, creds, http_client=api.client, timeout=7.0, deadline=12.0)
    await model.complete(REQUEST)
    assert api.requests[0].extensions["timeout"]["read"] == pytest.approx(7.0)


def test_credentials_repr_hides_keys() -> None:
    """Keys never show up in a repr (logs, tracebacks)."""
    creds = ProviderCredentials(anthropic_api_key="sk-ant-secret", openai_base_url="http://x")
    assert "sk-ant-secret" not in repr(creds)
    assert "http://x" in repr(creds)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8080/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.20:11434/v1", True),
        ("http://10.0.0.5/v1", True),
        ("http://ollama:11434/v1", True),
        ("http://host.docker.internal:11434/v1", True),
        ("http://gpu.localhost/v1", True),
        ("https://openrouter.ai/api/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://8.8.8.8/v1", False),
        ("not a url", False),
    ],
)
def test_is_local_url(url: str, local: bool) -> None:
    """Loopback, private and single-label hosts are local; public hosts are not."""
    assert is_local_url(url) is local
