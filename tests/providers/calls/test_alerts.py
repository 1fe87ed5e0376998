"""Provider failures reach the operator's log at warning or error, never with the key."""

from __future__ import annotations

import httpx2
import pytest
from structlog.testing import capture_logs

from config.specs import parse_spec
from providers.base import AuthenticationFailed, ChatModel, ProviderError, QuotaExhausted
from providers.factory import ProviderCredentials, build_chat_model
from tests.support.provider_api import OPENAI, REQUEST, MakeAPI, RecordingSleep, answer

KEY = "sk-proj-abcdef123456secret"


def _openai(client: httpx2.AsyncClient) -> ChatModel:
    creds = ProviderCredentials(openai_api_key=KEY)
    return build_chat_model(
        parse_spec("openai:gpt-4.1-mini"), creds, http_client=client, sleep=RecordingSleep()
    )


def _error(status: int, code: str, message: str) -> httpx2.Response:
    return httpx2.Response(
        status, json={"error": {"message": message, "type": code, "code": code}}
    )


async def test_rejected_key_is_an_error_naming_provider_and_model(fake_api: MakeAPI) -> None:
    """A 401 logs provider_auth_failed at error with provider and model, and no key."""
    message = f"Incorrect API key provided: {KEY}."
    api = fake_api("POST", OPENAI.path, _error(401, "invalid_api_key", message))
    model = _openai(api.client)
    with capture_logs() as logs, pytest.raises(AuthenticationFailed):
        await model.complete(REQUEST)
    [entry] = [e for e in logs if e["event"] == "provider_auth_failed"]
    assert entry["log_level"] == "error"
    assert (entry["provider"], entry["model"]) == ("openai", "gpt-4.1-mini")
    assert KEY not in repr(logs)
    assert "abcdef" not in repr(logs)


async def test_exhausted_quota_is_an_error(fake_api: MakeAPI) -> None:
    """insufficient_quota logs provider_quota_exhausted at error."""
    api = fake_api("POST", OPENAI.path, _error(429, "insufficient_quota", "You exceeded it."))
    with capture_logs() as logs, pytest.raises(QuotaExhausted):
        await _openai(api.client).complete(REQUEST)
    levels = {e["event"]: e["log_level"] for e in logs}
    assert levels["provider_quota_exhausted"] == "error"


async def test_repeated_failures_become_a_warning_then_recovery_is_told(
    fake_api: MakeAPI,
) -> None:
    """One failed call is info; the third in a row is a warning; success after it is told."""
    bad = [_error(400, "invalid_request_error", "nope") for _ in range(3)]
    ok = answer(200, "openai_completion")
    api = fake_api("POST", OPENAI.path, *bad, ok)
    model = _openai(api.client)
    with capture_logs() as logs:
        for _ in range(3):
            with pytest.raises(ProviderError):
                await model.complete(REQUEST)
        await model.complete(REQUEST)
    seen = [(e["event"], e["log_level"]) for e in logs if e["event"].startswith("provider_")]
    assert seen == [
        ("provider_failed", "info"),
        ("provider_failed", "info"),
        ("provider_failing", "warning"),
        ("provider_recovered", "warning"),
    ]


@pytest.mark.parametrize(
    "secret",
    [
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
        "fw_3ZkQv8s1Gq2Lr7TnYb5Wc",
        "0123456789abcdef0123456789abcdef",
    ],
)
async def test_auth_failure_logs_class_status_and_a_redacted_cut_message(
    fake_api: MakeAPI, secret: str
) -> None:
    """Keys of other shapes never reach provider_auth_failed, and an echoed prompt is cut."""
    echoed = "mi pedido llega tarde " * 10 + "y vivo en Calle Mayor 5"
    message = f"Invalid key {secret} for request: {echoed}"
    api = fake_api("POST", OPENAI.path, _error(401, "invalid_api_key", message))
    with capture_logs() as logs, pytest.raises(AuthenticationFailed):
        await _openai(api.client).complete(REQUEST)
    [entry] = [e for e in logs if e["event"] == "provider_auth_failed"]
    assert entry["error"] == "AuthenticationFailed"
    assert entry["status"] == 401
    assert len(entry["detail"]) <= 120
    assert secret not in repr(logs)
    assert "Calle Mayor" not in repr(logs)
