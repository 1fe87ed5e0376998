"""What both adapters share when an HTTP answer is an error: facts in, our error type out.

Each adapter reads the facts off its own SDK exception (status, body fields, headers);
the decision of which `ProviderError` that is lives here once, as a pure function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from .base import (
    AuthenticationFailed,
    BadRequest,
    ContextTooLong,
    Overloaded,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    QuotaExhausted,
    RateLimited,
)


@dataclass(frozen=True, slots=True)
class ErrorFacts:
    """What an adapter learned from one failed HTTP answer."""

    status: int
    message: str
    retry_after: float | None = None
    context_too_long: bool = False
    quota: bool = False
    overloaded: bool = False


def classify(facts: ErrorFacts) -> ProviderError:
    """Map one failed answer to our error type; provider quirks arrive as the flags."""
    error = _error_type(facts)
    wait = facts.retry_after if error.retryable else None  # a wait only where one helps
    return error(facts.message, retry_after=wait, status=facts.status)


def _error_type(facts: ErrorFacts) -> type[ProviderError]:
    status = facts.status
    # Quota first: both providers answer 429 for it, yet waiting cannot fix it.
    if facts.quota or status == 402:
        return QuotaExhausted
    if facts.context_too_long:
        return ContextTooLong
    if status in (401, 403):
        return AuthenticationFailed
    if facts.overloaded or status == 529:
        return Overloaded
    if status == 429:
        return RateLimited
    if status == 408:
        return ProviderTimeout
    if status >= 500:
        return ProviderUnavailable
    return BadRequest


def parse_retry_after(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, then `retry-after` (seconds or date).

    `now` is the wall clock (epoch seconds), needed only for the HTTP-date form.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - now)
    except (TypeError, ValueError):
        return None


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    # nan and inf parse as floats but mean nothing as a wait.
    return value if 0 <= value < float("inf") else None


def contains_any(text: str | None, needles: tuple[str, ...]) -> bool:
    lowered = (text or "").lower()
    return any(needle in lowered for needle in needles)


_MESSAGE_CHARS = 500  # of the provider's own words kept in the error (a body can be huge)


def describe(provider: str, status: int, kind: str | None, message: str | None) -> str:
    """The error's message: `anthropic 429 rate_limit_error: slow down`. The provider's
    words may hold a key or echo the prompt: logs take it through `config.redaction`."""
    head = f"{provider} {status}" + (f" {kind}" if kind else "")
    return f"{head}: {message[:_MESSAGE_CHARS]}" if message else head
