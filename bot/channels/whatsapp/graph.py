"""Sending text through the WhatsApp Cloud (Graph) API over httpx.

`split_text` is pure: the one splitter, counting characters. `GraphSender` posts one
message per chunk, backs off on throttling and transient failures with a bounded number of
retries, logs and drops permanent refusals (131047: outside the 24-hour customer-service
window) and never logs the access token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import structlog

from bot.channels.split import split_message

log = structlog.get_logger(__name__)

Sleep = Callable[[float], Awaitable[None]]
MAX_CHARS = 4096
OUTSIDE_WINDOW = 131047
THROTTLE_CODES = frozenset({4, 80007, 130429, 131048, 131056})
# A send holds its chat's queue: a hung Graph API must not hold it for long.
SEND_TIMEOUT = httpx.Timeout(5.0, connect=3.0)


def split_text(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Chunks of at most `limit` characters (WhatsApp counts characters), cut where the
    one splitter (`bot.channels.split`) cuts: paragraph, line, sentence or word ends."""
    return split_message(text, limit, length=len)


class SendFailed(Exception):
    """Transient failures outlasted the retries; the reply stays undelivered (and recoverable)."""


@dataclass(frozen=True, slots=True)
class GraphError:
    """A failed send as we see it; `status` 0 means no response at all (network)."""

    status: int
    code: int | None = None
    subcode: int | None = None
    trace: str | None = None
    retry_after: float | None = None
    network: str | None = None  # the exception's class name when there was no response

    @property
    def throttled(self) -> bool:
        return self.status == 429 or self.code in THROTTLE_CODES

    @property
    def transient(self) -> bool:
        return self.throttled or self.status >= 500 or self.status == 0


def graph_error(response: httpx.Response) -> GraphError:
    """Our view of a Graph API error body (`{"error": {"code", "error_subcode", …}}`)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    return GraphError(
        response.status_code,
        _int(error.get("code")),
        _int(error.get("error_subcode")),
        error.get("fbtrace_id") if isinstance(error.get("fbtrace_id"), str) else None,
        _retry_after(response),
    )


class GraphSender:
    """`POST {graph_url}/{phone_number_id}/messages` with a bearer token."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        graph_url: str,
        phone_number_id: str,
        token: str,
        sleep: Sleep = asyncio.sleep,
        retries: int = 3,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        timeout: httpx.Timeout = SEND_TIMEOUT,
    ) -> None:
        self._client = client
        self._url = f"{graph_url.rstrip('/')}/{phone_number_id}/messages"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._sleep = sleep
        self._retries = retries
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._timeout = timeout

    async def send_text(self, wa_id: str, text: str) -> bool:
        """Send every chunk of `text`; False when Graph refused it for good (logged)."""
        for chunk in split_text(text):
            if not await self.send_chunk(wa_id, chunk):
                return False
        return True

    async def send_chunk(
        self, wa_id: str, chunk: str, *, retries: int | None = None, tried: int = 0
    ) -> bool:
        """One message of at most 4096 characters; `retries` overrides the sender's own,
        `tried` counts attempts already made elsewhere (the backoff goes on from there).
        False when refused for good (logged); `SendFailed` when transient failures last."""
        retries = self._retries if retries is None else retries
        return await self._post(_message(wa_id, chunk), range(tried, tried + retries + 1))

    def backoff(self, attempt: int) -> float:
        return min(self._base_delay * 2.0**attempt, self._max_delay)

    async def _post(self, payload: dict[str, Any], attempts: range) -> bool:
        for attempt in attempts:
            error = await self._attempt(payload)
            if error is None:
                return True
            if not error.transient:
                _log_refusal(error)
                return False
            if attempt == attempts[-1]:
                break
            delay = self._delay(attempt, error)
            log.warning(
                "whatsapp_send_retry",
                status=error.status,
                code=error.code,
                network=error.network,
                attempt=attempt + 1,
                delay_s=delay,
            )
            await self._sleep(delay)
        log.warning("whatsapp_send_failed", attempts=len(attempts))
        raise SendFailed("the Graph API kept failing; the reply was not delivered")

    async def _attempt(self, payload: dict[str, Any]) -> GraphError | None:
        try:
            response = await self._client.post(
                self._url, json=payload, headers=self._headers, timeout=self._timeout
            )
        except httpx.TransportError as exc:  # the request (and its header) stays out of logs
            return GraphError(0, network=type(exc).__name__)
        return None if response.is_success else graph_error(response)

    def _delay(self, attempt: int, error: GraphError) -> float:
        if error.retry_after is not None:
            return min(error.retry_after, self._max_delay)
        return self.backoff(attempt)


def _log_refusal(error: GraphError) -> None:
    event = "whatsapp_outside_window" if error.code == OUTSIDE_WINDOW else "whatsapp_send_refused"
    log.error(
        event, status=error.status, code=error.code, subcode=error.subcode, fbtrace_id=error.trace
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _retry_after(response: httpx.Response) -> float | None:
    raw: str = response.headers.get("Retry-After") or ""
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 else None


def _message(wa_id: str, body: str) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": wa_id,
        "type": "text",
        "text": {"preview_url": False, "body": body},
    }
