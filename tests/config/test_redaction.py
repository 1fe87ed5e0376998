"""`redact`: keys of every shape and echoed user text never reach a log line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.redaction import MAX_CHARS, REDACTED, redact, redact_secrets

SECRETS = [
    pytest.param("sk-proj-abcdef123456secretXYZ", id="openai"),
    pytest.param("sk-ant-api03-Zx9_abcDEF-1234567890", id="anthropic"),
    pytest.param("sk-ab***cd12", id="masked openai"),
    pytest.param("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv", id="google"),
    pytest.param("fw_3ZkQv8s1Gq2Lr7TnYb5Wc", id="fireworks"),
    pytest.param("gsk_8dKe02LmQpRs71vTzXc", id="groq"),
    pytest.param("xai-Gh38sk2LlqP0vvQ9", id="xai"),
    pytest.param("hf_AbCdEfGhIjKlMnOpQrSt", id="huggingface"),
    pytest.param("ghp_16C7e42F292c6912E7710c838347Ae178B4a", id="github"),
    pytest.param("AKIAIOSFODNN7EXAMPLE", id="aws"),
    pytest.param("0123456789abcdef0123456789abcdef", id="hex 32"),
    pytest.param("d41d8cd98f00b204e9800998ecf8427e", id="md5 hex"),
    pytest.param("dGhpcyBpcyBhIHNlY3JldCBrZXkgb2YgYmFzZTY0IGZvcm0=", id="base64"),
    pytest.param(
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX29mX2p3dA", id="jwt"
    ),
    pytest.param("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8", id="telegram bot token"),
]


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize(
    "template",
    ["{}", "Incorrect API key provided: {}.", "key={} rejected", "'{}'", "(x-api-key: {})"],
)
def test_keys_of_every_shape_are_redacted(secret: str, template: str) -> None:
    """The key is gone wherever it sits in the message, and the rest is kept."""
    out = redact(template.format(secret))
    assert REDACTED in out
    assert secret not in out
    assert secret[6:18] not in out


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Bearer abc.def-ghi_123",
        "bearer qwertyuiopas",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    ],
)
def test_bearer_and_basic_credentials_are_redacted(line: str) -> None:
    """Whatever follows Bearer/Basic is the credential."""
    out = redact(line)
    assert REDACTED in out
    assert line.split()[-1] not in out


@pytest.mark.parametrize(
    "text",
    [
        "anthropic 429 rate_limit_error: Number of request tokens has exceeded your limit",
        "openai 400 context_length_exceeded: maximum context length is 128000 tokens",
        "openai 404 model_not_found: The model `gpt-4.1-mini` does not exist",
        "anthropic 529 overloaded_error: Overloaded",
        "request timed out",
        'File "/work/wt/security/tests/config/test_logging_and_more.py", line 102',
        "in test_error_fields_are_redacted_at_every_level_of_the_logger",
    ],
)
def test_ordinary_error_text_is_kept(text: str) -> None:
    """Status lines, codes and model names are what an operator needs: untouched."""
    assert redact(text) == text


def test_echoed_user_text_is_cut_after_redaction() -> None:
    """A message that quotes the prompt is cut to MAX_CHARS, so user text does not follow."""
    echoed = "openai 400 invalid_request_error: Invalid content: " + "mi tarjeta 4111 " * 40
    out = redact(echoed)
    assert len(out) <= MAX_CHARS
    assert out.endswith("…")
    assert out.startswith("openai 400 invalid_request_error")


def test_a_key_at_the_cut_is_still_redacted() -> None:
    """Redaction happens before the cut: half a key at the edge is never left behind."""
    text = "x" * (MAX_CHARS - 10) + " sk-proj-abcdef123456secretXYZ"
    assert "sk-proj" not in redact(text)


def test_control_characters_cannot_forge_log_lines() -> None:
    """Newlines and other controls in a provider's message become spaces."""
    assert "\n" not in redact("bad\nrequest\r\x1b[31m")


@given(st.text(max_size=400))
def test_redact_is_bounded_and_idempotent(text: str) -> None:
    """Any text: at most MAX_CHARS out, and redacting twice changes nothing more."""
    once = redact(text)
    assert len(once) <= MAX_CHARS
    assert redact_secrets(once) == once
