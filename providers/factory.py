"""Build a `ChatModel` from a parsed spec and the credentials our settings read.

Settings read `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY` and
`OPENAI_BASE_URL` once and hand them over here; the SDKs never look for them.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass

import httpx2

from config.specs import ModelSpec

from .alerts import ReportingChatModel
from .anthropic import AnthropicChatModel
from .base import ChatModel
from .cap import DEFAULT_REPLY_MAX_CHARS
from .offline import OfflineChatModel
from .openai import OpenAIChatModel
from .retry import RetryPolicy, Sleep

# Local servers (Ollama, llama.cpp, vLLM) ignore the key, but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "sk-no-key-required"
_LOCAL_NAMES = ("localhost", "host.docker.internal")


@dataclass(frozen=True, slots=True)
class ProviderCredentials:
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    openai_api_key: str | None = None
    openai_base_url: str | None = None

    def __repr__(self) -> str:
        # Keys must not reach logs or tracebacks through a repr.
        return (
            f"ProviderCredentials(anthropic_api_key={_mask(self.anthropic_api_key)}, "
            f"anthropic_base_url={self.anthropic_base_url!r}, "
            f"openai_api_key={_mask(self.openai_api_key)}, "
            f"openai_base_url={self.openai_base_url!r})"
        )


class MissingCredentials(ValueError):
    """A configured provider has no key; the message names the variable to set."""

    def __init__(self, variable: str, spec: ModelSpec) -> None:
        super().__init__(f"{variable} is not set, but the model {spec} needs it")
        self.variable = variable


def build_chat_model(
    spec: ModelSpec,
    creds: ProviderCredentials,
    *,
    http_client: httpx2.AsyncClient | None = None,
    timeout: float = 20.0,
    deadline: float = 25.0,
    sleep: Sleep = asyncio.sleep,
    reply_max_chars: int = DEFAULT_REPLY_MAX_CHARS,
) -> ChatModel:
    """One model per spec; `timeout` bounds an attempt, `deadline` a whole reply, and
    `reply_max_chars` its size (see `cap`)."""
    policy = RetryPolicy(deadline=deadline, attempt_timeout=min(timeout, deadline))
    if spec.provider == "anthropic":
        if not creds.anthropic_api_key:
            raise MissingCredentials("ANTHROPIC_API_KEY", spec)
        return ReportingChatModel(
            AnthropicChatModel(
                spec.model,
                api_key=creds.anthropic_api_key,
                base_url=creds.anthropic_base_url,
                http_client=http_client,
                policy=policy,
                sleep=sleep,
                reply_max_chars=reply_max_chars,
            )
        )
    if spec.provider == "openai":
        return ReportingChatModel(
            OpenAIChatModel(
                spec.model,
                api_key=_openai_key(spec, creds),
                base_url=creds.openai_base_url,
                http_client=http_client,
                policy=policy,
                sleep=sleep,
                reply_max_chars=reply_max_chars,
            )
        )
    return OfflineChatModel(spec.model)


def _openai_key(spec: ModelSpec, creds: ProviderCredentials) -> str:
    if creds.openai_api_key:
        return creds.openai_api_key
    if creds.openai_base_url and is_local_url(creds.openai_base_url):
        return LOCAL_PLACEHOLDER_KEY
    raise MissingCredentials("OPENAI_API_KEY", spec)


def is_local_url(url: str) -> bool:
    """True for loopback, private-network and single-label hosts (`ollama` in Compose).

    Such a server is one the operator runs; a public host always wants a key.
    """
    try:
        host = httpx2.URL(url).host.lower()
    except httpx2.InvalidURL:
        return False
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return bool(host) and "." not in host
    return address.is_loopback or address.is_private


def _mask(secret: str | None) -> str:
    return "None" if secret is None else "'***'"
