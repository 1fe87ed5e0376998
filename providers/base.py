"""The one seam every model sits behind: our own request, reply and error types.

Adapters convert SDK objects to these at their edge; nothing outside `providers/`
sees an SDK type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant"]
StopReason = Literal["end", "max_tokens", "error", "other"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One call: the system prompt apart, then alternating user/assistant messages."""

    system: str
    messages: tuple[Message, ...]
    max_tokens: int
    purpose: Literal["chat", "fold", "topic", "probe"] = "chat"
    language: str = "es"


@dataclass(frozen=True, slots=True)
class Usage:
    """As the provider reported it; `input_tokens` includes `cached_tokens` (read from a
    prompt cache), which are billed cheaper where the provider reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ChatReply:
    """`capped`: the adapter cut the reply at its size cap (and read no further); it is
    truncated (`stop_reason="max_tokens"`) and, being that long, never shown as such."""

    text: str
    stop_reason: StopReason = "end"
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    capped: bool = False


def valid_text(text: str) -> str:
    """`text` as storable, sendable Unicode. JSON (a model's reply, a Telegram update, a
    WhatsApp webhook) may carry lone surrogates (`"\\ud800"`), which SQLite and every
    channel refuse to encode: split pairs are joined, a lone surrogate becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a request into a reply, or raises a `ProviderError`."""

    name: str

    async def complete(self, request: ChatRequest) -> ChatReply: ...


class ProviderError(Exception):
    """Base of every model failure; `kind` is stable and stored as a noise reason.
    `status`: the HTTP status of the answer it came from, if any. The message may quote
    the provider (keys, the prompt): log it only through `config.redaction.redact`."""

    kind = "provider_error"
    retryable = False

    def __init__(
        self, message: str = "", *, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message or self.kind)
        self.retry_after = retry_after
        self.status = status


class RateLimited(ProviderError):
    kind = "rate_limited"
    retryable = True


class QuotaExhausted(ProviderError):
    kind = "quota_exhausted"


class Overloaded(ProviderError):
    kind = "overloaded"
    retryable = True


class ProviderTimeout(ProviderError):
    kind = "timeout"
    retryable = True


class ContextTooLong(ProviderError):
    kind = "context_too_long"


class AuthenticationFailed(ProviderError):
    kind = "auth"


class BadRequest(ProviderError):
    kind = "bad_request"


class ProviderUnavailable(ProviderError):
    """Server errors, broken responses, connection failures."""

    kind = "unavailable"
    retryable = True
