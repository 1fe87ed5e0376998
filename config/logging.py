"""structlog, configured once for the whole program.

Bodies and secrets stay out of logs above debug: events carry ids, sizes and token
counts; the `redact` processor is a last line of defence for keys that must never
appear at info level or above. WhatsApp session keys are phone numbers, and WhatsApp
message ids (wamids) decode to one: above debug the `Pseudonymize` processor replaces
both with a stable keyed hash (`whatsapp:~3f9a…`, `wamid:~81c0…`), so logs kept after a
`/forget` name no one; at debug the raw value is shown next to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import secrets
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from config.redaction import redact_secrets

# Fields that may carry message bodies or secrets: dropped unless the level is debug.
SENSITIVE_KEYS = frozenset(
    {
        "text",
        "content",
        "body",
        "reply",
        "message",
        "prompt",
        "summary",
        "token",
        "secret",
        "api_key",
        "authorization",
        "payload",
    }
)
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


# Fields that may carry a session key or a `channel:user_id`.
KEY_FIELDS = ("key", "user", "session_key")
PSEUDONYMIZED_CHANNELS = ("whatsapp:",)  # keys that are phone numbers
WAMID_PREFIX = "wamid."  # WhatsApp message ids: base64 of a record holding the phone number
_PSEUDONYM_CONTEXT = b"ventana log pseudonym v1"


def pseudonym_secret(explicit: str | None, fallback: str | None = None) -> bytes:
    """The HMAC key of log pseudonyms: the explicit setting, else derived from a secret
    the install already has (WhatsApp's app secret), else random for this process."""
    if explicit:
        return explicit.encode()
    if fallback:
        return hmac.new(fallback.encode(), _PSEUDONYM_CONTEXT, hashlib.sha256).digest()
    return secrets.token_bytes(32)


def pseudonym(secret: bytes, value: str) -> str:
    """`whatsapp:~<12 hex>`: the same for the same key and secret, unlinkable without it."""
    channel, _, _ = value.partition(":")
    digest = hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:12]
    return f"{channel}:~{digest}"


def _identifying(field: str, value: object) -> str | None:
    """What to pseudonymize of one field: a phone-number key, or a WhatsApp message id
    (`wamid.…`, whatever the field is called: its base64 holds the sender's phone), as
    the `channel:value` the pseudonym hashes; None for anything else."""
    if not isinstance(value, str):
        return None
    if value.startswith(WAMID_PREFIX):
        return "wamid:" + value.removeprefix(WAMID_PREFIX)
    if field in KEY_FIELDS and value.startswith(PSEUDONYMIZED_CHANNELS):
        return value
    return None


class Pseudonymize:
    """structlog processor: phone-number keys and wamids become pseudonyms above debug."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret

    def __call__(
        self, _: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        for field, value in list(event.items()):
            named = _identifying(field, value)
            if named is None:
                continue
            if method == "debug":
                event[f"{field}_pseudonym"] = pseudonym(self.secret, named)
            else:
                event[field] = pseudonym(self.secret, named)
        return event


# Fields that carry text from outside (an exception, a provider's message): key-shaped
# runs in them are redacted at every level (`config.redaction`).
ERROR_FIELDS = ("error", "detail", "reason", "exception")


def redact_errors(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Keys of any shape out of the fields that quote failures, debug included."""
    for field in ERROR_FIELDS:
        value = event.get(field)
        if isinstance(value, str):
            event[field] = redact_secrets(value)
    return event


def redact(_: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Drop sensitive keys from every event above debug."""
    if method != "debug":
        for key in SENSITIVE_KEYS.intersection(event):
            event[key] = "[redacted]"
    return event


def configure_logging(
    fmt: str = "console", level: str = "info", pseudonym_key: bytes | None = None
) -> None:
    """One call at start. JSON lines for machines, colourless console lines for people.
    `pseudonym_key` keeps pseudonyms stable across restarts (see `pseudonym_secret`)."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared = _shared_processors(fmt, pseudonym_key or pseudonym_secret(None))
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, *shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=_sturdy_stderr,
        cache_logger_on_first_use=False,
    )
    _route_stdlib(renderer, shared, level)


class SturdyPrintLogger(structlog.PrintLogger):
    """structlog's `PrintLogger` that drops a line it cannot write (stderr closed, its
    reader gone: `EPIPE`), as the stdlib's handlers do: a log line never fails a turn."""

    def msg(self, message: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a broken pipe, a closed stream
            super().msg(message)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def _sturdy_stderr(*_: Any) -> SturdyPrintLogger:
    return SturdyPrintLogger(sys.stderr)


def _shared_processors(fmt: str, pseudonym_key: bytes) -> list[Any]:
    """What every line goes through, ours or a library's, before it is rendered."""
    return [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        Pseudonymize(pseudonym_key),
        redact,
        # A plain traceback in both formats, then redacted: the console renderer's own
        # (rich) would print every frame's locals (message bodies, tokens), unredacted.
        structlog.processors.format_exc_info,
        redact_errors,
    ]


def _route_stdlib(renderer: Any, shared: list[Any], level: str) -> None:
    """Libraries (uvicorn, psycopg, httpx, telegram) log through the stdlib: their lines
    are rendered by structlog too (JSON logs stay JSON), kept quiet (warning and up) and
    on stderr. Their message is text from outside: keys in it are redacted."""
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_logger_name,
            _redact_foreign_message,
            *shared,
        ],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(max(_LEVELS.get(level, logging.INFO), logging.WARNING))


def _redact_foreign_message(
    _: Any, __: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    message = event.get("event")
    if isinstance(message, str):
        event["event"] = redact_secrets(message)
    return event
