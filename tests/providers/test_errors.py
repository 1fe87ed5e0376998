"""The shared, pure part of error mapping: status and flags to type, and retry-after parsing."""

from __future__ import annotations

import pytest

from providers.base import (
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
from providers.errors import ErrorFacts, classify, parse_retry_after

NOW = 1_750_000_000.0  # 2025-06-15T15:06:40Z


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (ErrorFacts(400, "m", context_too_long=True), ContextTooLong),
        (ErrorFacts(400, "m"), BadRequest),
        (ErrorFacts(404, "m"), BadRequest),
        (ErrorFacts(422, "m"), BadRequest),
        (ErrorFacts(401, "m"), AuthenticationFailed),
        (ErrorFacts(403, "m"), AuthenticationFailed),
        (ErrorFacts(402, "m"), QuotaExhausted),
        (ErrorFacts(429, "m", quota=True), QuotaExhausted),
        (ErrorFacts(429, "m", retry_after=2.0), RateLimited),
        (ErrorFacts(408, "m"), ProviderTimeout),
        (ErrorFacts(500, "m"), ProviderUnavailable),
        (ErrorFacts(503, "m", overloaded=True), Overloaded),
        (ErrorFacts(529, "m"), Overloaded),
    ],
)
def test_classify(facts: ErrorFacts, expected: type[ProviderError]) -> None:
    """Each status (with the provider's flags) maps to exactly one of our types."""
    error = classify(facts)
    assert type(error) is expected
    assert str(error) == "m"


def test_classify_keeps_retry_after() -> None:
    """The server's wait travels on the error, for the retry loop and the user message."""
    assert classify(ErrorFacts(429, "m", retry_after=4.0)).retry_after == 4.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Sun, 15 Jun 2025 15:06:50 GMT"}, 10.0),
        ({"retry-after": "Sun, 15 Jun 2025 15:00:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, None),
        ({"retry-after": "nan"}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    """Milliseconds, seconds and HTTP dates are understood; nonsense is ignored."""
    assert parse_retry_after(headers, now=NOW) == expected
