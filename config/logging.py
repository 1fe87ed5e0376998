"""structlog, configured once for the whole program.

Bodies and secrets stay out of logs above debug: events carry ids, sizes and token
counts; the `redact` processor is a last line of defence for keys that must never
appear at info level or above.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

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


def redact(_: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Drop sensitive keys from every event above debug."""
    if method != "debug":
        for key in SENSITIVE_KEYS.intersection(event):
            event[key] = "[redacted]"
    return event


def configure_logging(fmt: str = "console", level: str = "info") -> None:
    """One call at start. JSON lines for machines, colourless console lines for people."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact,
            structlog.processors.format_exc_info if fmt == "json" else _identity,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # Libraries (httpx, telegram, uvicorn) log through the stdlib: keep them quiet and on stderr.
    logging.basicConfig(
        level=max(_LEVELS.get(level, logging.INFO), logging.WARNING), stream=sys.stderr, force=True
    )


def _identity(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return event
