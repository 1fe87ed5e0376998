"""Both adapters map HTTP failures to our error types and retry only what can succeed.

One table per provider (its real error bodies), one set of tests run against both.
"""

from __future__ import annotations

import httpx2
import pytest

from providers import base
from tests.support.provider_api import (
    ANTHROPIC,
    FLAVORS,
    OPENAI,
    REQUEST,
    Flavor,
    MakeAPI,
    RecordingSleep,
    Step,
    answer,
    connect_error,
    read_timeout,
)

BROKEN_JSON = httpx2.Response(
    200, content=b'{"id": "msg_01', headers={"content-type": "application/json"}
)
WRONG_SHAPE = httpx2.Response(200, json={"unexpected": True})
HTML_502 = httpx2.Response(502, text="<html><body>502 Bad Gateway</body></html>")
ANTHROPIC_403 = httpx2.Response(
    403,
    json={
        "type": "error",
        "error": {"type": "permission_error", "message": "Your API key lacks permission."},
    },
)
OPENAI_404 = httpx2.Response(
    404,
    json={
        "error": {
            "message": "The model `gpt-9` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        }
    },
)

# (label, flavor, step, error type, requests made): 1 = not retried, 3 = two retries.
CASES: list[tuple[str, Flavor, Step, type[base.ProviderError], int]] = [
    ("400-too-long", ANTHROPIC, answer(400, "anthropic_prompt_too_long"), base.ContextTooLong, 1),
    (
        "401",
        ANTHROPIC,
        answer(401, "anthropic_authentication_error"),
        base.AuthenticationFailed,
        1,
    ),
    ("403", ANTHROPIC, ANTHROPIC_403, base.AuthenticationFailed, 1),
    ("400-credit", ANTHROPIC, answer(400, "anthropic_credit_balance"), base.QuotaExhausted, 1),
    ("429-spend-limit", ANTHROPIC, answer(429, "anthropic_spend_limit"), base.QuotaExhausted, 1),
    ("404-model", ANTHROPIC, answer(404, "anthropic_not_found"), base.BadRequest, 1),
    ("429", ANTHROPIC, answer(429, "anthropic_rate_limit"), base.RateLimited, 3),
    ("500", ANTHROPIC, answer(500, "anthropic_api_error"), base.ProviderUnavailable, 3),
    ("529", ANTHROPIC, answer(529, "anthropic_overloaded"), base.Overloaded, 3),
    ("400-context-length", OPENAI, answer(400, "openai_context_length"), base.ContextTooLong, 1),
    ("401", OPENAI, answer(401, "openai_invalid_api_key"), base.AuthenticationFailed, 1),
    ("429-quota", OPENAI, answer(429, "openai_insufficient_quota"), base.QuotaExhausted, 1),
    ("404-model", OPENAI, OPENAI_404, base.BadRequest, 1),
    ("429", OPENAI, answer(429, "openai_rate_limit"), base.RateLimited, 3),
    ("500", OPENAI, answer(500, "openai_server_error"), base.ProviderUnavailable, 3),
    ("503-overloaded", OPENAI, answer(503, "openai_overloaded"), base.Overloaded, 3),
    ("529", OPENAI, answer(529, "openai_server_error"), base.Overloaded, 3),
]
for flavor in (ANTHROPIC, OPENAI):
    CASES += [
        ("read-timeout", flavor, read_timeout, base.ProviderTimeout, 3),
        ("connect-error", flavor, connect_error, base.ProviderUnavailable, 3),
        ("502-html", flavor, HTML_502, base.ProviderUnavailable, 3),
        ("200-broken-json", flavor, BROKEN_JSON, base.ProviderUnavailable, 3),
        ("200-wrong-shape", flavor, WRONG_SHAPE, base.ProviderUnavailable, 3),
    ]


@pytest.mark.parametrize(
    ("flavor", "step", "error", "calls"),
    [pytest.param(*case[1:], id=f"{case[1].name}-{case[0]}") for case in CASES],
)
async def test_failure_maps_to_our_type_and_retries_only_when_useful(
    fake_api: MakeAPI,
    sleep: RecordingSleep,
    flavor: Flavor,
    step: Step,
    error: type[base.ProviderError],
    calls: int,
) -> None:
    """Each failure raises its own type; only retryable ones are tried again (twice at most)."""
    api = fake_api("POST", flavor.path, step, step, step)
    with pytest.raises(error) as caught:
        await flavor.build(api.client, sleep).complete(REQUEST)
    assert type(caught.value) is error
    assert len(api.requests) == calls
    assert len(sleep.delays) == calls - 1


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize(
    ("headers", "delay"), [({"retry-after": "3"}, 3.0), ({"retry-after-ms": "250"}, 0.25)]
)
async def test_rate_limit_retry_after_is_honoured(
    fake_api: MakeAPI,
    sleep: RecordingSleep,
    flavor: Flavor,
    headers: dict[str, str],
    delay: float,
) -> None:
    """A 429 with retry-after waits exactly that long, then the retry succeeds."""
    limited = answer(429, f"{flavor.name}_rate_limit", headers)
    api = fake_api("POST", flavor.path, limited, answer(200, flavor.ok))
    reply = await flavor.build(api.client, sleep).complete(REQUEST)
    assert reply.text
    assert sleep.delays == [delay]
    assert len(api.requests) == 2


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_long_retry_after_ends_the_reply_at_once(
    fake_api: MakeAPI, sleep: RecordingSleep, flavor: Flavor
) -> None:
    """A retry-after beyond the cap is not waited for; the error carries it for the user."""
    limited = answer(429, f"{flavor.name}_rate_limit", {"retry-after": "30"})
    api = fake_api("POST", flavor.path, limited, answer(200, flavor.ok))
    with pytest.raises(base.RateLimited) as caught:
        await flavor.build(api.client, sleep).complete(REQUEST)
    assert caught.value.retry_after == 30.0
    assert sleep.delays == []
    assert len(api.requests) == 1


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_overloaded_honours_retry_after(
    fake_api: MakeAPI, sleep: RecordingSleep, flavor: Flavor
) -> None:
    """A 529 with retry-after waits that long before the one retry that succeeds."""
    busy = httpx2.Response(
        529, json={"error": {"type": "overloaded_error"}}, headers={"retry-after": "1"}
    )
    api = fake_api("POST", flavor.path, busy, answer(200, flavor.ok))
    await flavor.build(api.client, sleep).complete(REQUEST)
    assert sleep.delays == [1.0]


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_timeout_then_success(
    fake_api: MakeAPI, sleep: RecordingSleep, flavor: Flavor
) -> None:
    """A read timeout is retried after a short backoff."""
    api = fake_api("POST", flavor.path, read_timeout, answer(200, flavor.ok))
    reply = await flavor.build(api.client, sleep).complete(REQUEST)
    assert reply.stop_reason == "end"
    assert sleep.delays == [0.5]


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_error_message_names_provider_and_api_message(
    fake_api: MakeAPI, sleep: RecordingSleep, flavor: Flavor
) -> None:
    """The error text is short and says who answered what, for logs and noise reasons."""
    golden = {"anthropic": "anthropic_prompt_too_long", "openai": "openai_context_length"}
    api = fake_api("POST", flavor.path, answer(400, golden[flavor.name]))
    with pytest.raises(base.ContextTooLong) as caught:
        await flavor.build(api.client, sleep).complete(REQUEST)
    assert str(caught.value).startswith(f"{flavor.name} 400 ")
    assert "tokens" in str(caught.value)
