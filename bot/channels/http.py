"""The webhook server's routes. They only translate HTTP to the channel classes and back."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import structlog
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from bot.channels.whatsapp.channel import WhatsAppChannel

log = structlog.get_logger(__name__)
MAX_BODY = 1 << 20  # webhook payloads are a few kilobytes; refuse to buffer more
PING_TIMEOUT_S = 2.0
Ping = Callable[[], Awaitable[bool]]  # does the database answer?


class TelegramWebhook(Protocol):
    async def handle_webhook(self, body: bytes, secret_header: str | None) -> int: ...


class BodyTooLarge(Exception):
    pass


def build_http_app(
    ping: Ping, *, whatsapp: WhatsAppChannel | None = None, telegram: TelegramWebhook | None = None
) -> Starlette:
    """`/healthz` always (200 while `ping` answers true); the webhook routes of the
    channels given."""

    async def healthz(request: Request) -> Response:
        try:
            ok = await asyncio.wait_for(ping(), PING_TIMEOUT_S)
        except Exception:
            log.warning("healthz_failed", exc_info=True)
            ok = False
        return JSONResponse({"ok": ok}, status_code=200 if ok else 503)

    routes = [Route("/healthz", healthz, methods=["GET"])]
    if whatsapp is not None:
        routes += _whatsapp_routes(whatsapp)
    if telegram is not None:
        routes += _telegram_routes(telegram)
    return Starlette(routes=routes)


async def _read(request: Request) -> bytes | Response:
    """A webhook's body, or the answer when it cannot be read (over the cap, hung up)."""
    try:
        return await _body(request)
    except BodyTooLarge:
        return Response(status_code=413)
    except ClientDisconnect:
        return _gone()


def _whatsapp_routes(channel: WhatsAppChannel) -> list[Route]:
    async def verify(request: Request) -> Response:
        body, status = channel.handle_get(request.query_params)
        return PlainTextResponse(body, status_code=status)

    async def receive(request: Request) -> Response:
        raw = await _read(request)
        if isinstance(raw, Response):
            return raw
        status = await channel.handle_post(raw, request.headers.get("X-Hub-Signature-256"))
        return Response(status_code=status)

    return [
        Route("/whatsapp/webhook", verify, methods=["GET"]),
        Route("/whatsapp/webhook", receive, methods=["POST"]),
    ]


def _telegram_routes(channel: TelegramWebhook) -> list[Route]:
    async def receive(request: Request) -> Response:
        raw = await _read(request)
        if isinstance(raw, Response):
            return raw
        secret = request.headers.get("X-Telegram-Bot-Api-Secret-Token")
        return Response(status_code=await channel.handle_webhook(raw, secret))

    return [Route("/telegram/webhook", receive, methods=["POST"])]


def _gone() -> Response:
    """The client left mid-body (or was cut off for being slow): routine, nothing to answer."""
    log.debug("http_client_disconnected")
    return Response(status_code=400)


async def _body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The raw body (signatures cover exact bytes), refusing anything over `limit`."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
