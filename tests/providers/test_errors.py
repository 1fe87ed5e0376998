"""The shared, pure part of error mapping: status and flags to type, and retry-after parsing."""

from __future__ import annotations

import pytest

from providers import base
from providers.errors import ErrorFacts, classify, parse_retry_after

NOW = 1_750_000_000.0  # 2025-06-15T15:06:40Z


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (ErrorFacts(400, "m", context_too_long=True), base.ContextTooLong),
        (ErrorFacts(400, "m"), base.BadRequest),
        (ErrorFacts(404, "m"), base.BadRequest),
        (ErrorFacts(422, "m"), base.BadRequest),
        (ErrorFacts(401, "m"), base.AuthenticationFailed),
        (ErrorFacts(403, "m"), base.AuthenticationFailed),
        (ErrorFacts(402, "m"), base.QuotaExhausted),
        (ErrorFacts(429, "m", quota=True), base.QuotaExhausted),
        (ErrorFacts(429, "m", retry_after=2.0), base.RateLimited),
        (ErrorFacts(408, "m"), base.ProviderTimeout),
        (ErrorFacts(500, "m"), base.ProviderUnavailable),
        (ErrorFacts(503, "m", overloaded=True), base.Overloaded),
        (ErrorFacts(529, "m"), base.Overloaded),
    ],
)
def test_classify(facts: ErrorFacts, expected: type[base.ProviderError]) -> None:
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
