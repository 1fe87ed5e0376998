"""`provider:model` specs: the format of VENTANA_CHAT_MODEL and VENTANA_SUMMARY_MODEL,
validated with the settings; `providers.factory` builds models from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Provider = Literal["anthropic", "openai", "offline"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "offline")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: Provider
    model: str

    def __str__(self) -> str:
        return "offline" if self.provider == "offline" else f"{self.provider}:{self.model}"


def parse_spec(text: str) -> ModelSpec:
    """Parse `anthropic:claude-sonnet-4-6`, `openai:gpt-4.1-mini` or `offline`."""
    raw = text.strip()
    provider, _, model = raw.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if provider == "offline":
        return ModelSpec("offline", model or "offline")
    if provider not in PROVIDERS:
        raise ValueError(
            f"unknown provider {provider!r} in {raw!r}; "
            "use anthropic:MODEL, openai:MODEL or offline"
        )
    if not model:
        raise ValueError(f"{raw!r} names no model; write it as {provider}:MODEL")
    return ModelSpec(provider, model)
