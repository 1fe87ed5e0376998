"""`ventana run` with real channels: Telegram and/or WhatsApp in one process.

Order matters. Each channel registers its outbox and queues its own inbox entries a
previous run left unfinished (exactly once) before its intake starts (polling, the
webhook server), so a message is never queued twice nor answered into the void.
Cancellation (SIGTERM, Ctrl-C, see `cli._guarded`) stops intake first, lets turns in
flight deliver for a moment, then stops the channels and closes the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import httpx
import structlog
import uvicorn

from bot.app import App
from bot.channels.http import build_http_app
from bot.channels.whatsapp.channel import WhatsAppChannel
from config.settings import Settings
from providers.base import ChatModel

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from bot.channels.telegram.channel import TelegramChannel

log = structlog.get_logger(__name__)

INBOX_KEEP = timedelta(days=8)  # Meta and Telegram redeliver for days; dedupe must outlive that
PRUNE_EVERY_S = 24 * 3600.0
GRACEFUL_SHUTDOWN_S = 5
DRAIN_S = 10.0


async def run_channels(
    settings: Settings,
    *,
    chat_model: ChatModel | None = None,
    summary_model: ChatModel | None = None,
    whatsapp_client: httpx.AsyncClient | None = None,
    ready: asyncio.Event | None = None,
) -> int:
    """Serve every configured channel until cancelled; the keywords are test seams."""
    app = await App.build(settings, chat_model=chat_model, summary_model=summary_model)
    whatsapp: WhatsAppChannel | None = None
    telegram: TelegramChannel | None = None
    try:
        if settings.whatsapp_enabled:
            whatsapp = WhatsAppChannel(app, http_client=whatsapp_client)
        telegram = _telegram(app) if settings.telegram_enabled else None
        await _serve(app, whatsapp, telegram, ready)
    finally:
        await _close(app, whatsapp, telegram)
    return 0


def _telegram(app: App) -> TelegramChannel:
    from bot.channels.telegram.channel import (
        TelegramChannel,  # python-telegram-bot only when Telegram is on
    )

    return TelegramChannel(app)


async def _serve(
    app: App,
    whatsapp: WhatsAppChannel | None,
    telegram: TelegramChannel | None,
    ready: asyncio.Event | None,
) -> None:
    recovered = await whatsapp.start() if whatsapp is not None else 0
    pruner = asyncio.create_task(_prune_daily(app), name="inbox-prune")
    try:
        if telegram is not None:
            await telegram.start()
        webhook = telegram if app.settings.telegram_webhook_url else None
        if whatsapp is not None or webhook is not None:
            http = build_http_app(app, whatsapp=whatsapp, telegram=webhook)
            await _run_http(http, app.settings, ready, recovered)
        else:
            log.info("channels_running", telegram="polling", recovered=recovered)
            if ready is not None:
                ready.set()
            await asyncio.Event().wait()  # polling runs in the background until cancelled
    finally:
        pruner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pruner


async def _run_http(
    http: Starlette, settings: Settings, ready: asyncio.Event | None, recovered: int
) -> None:
    """uvicorn until cancelled; then it stops accepting and lets answers in flight finish."""
    config = uvicorn.Config(
        http,
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    server = _Server(config)
    sock = _bind(settings.http_host, settings.http_port)
    serving = asyncio.create_task(server.serve(sockets=[sock]), name="http")
    try:
        await _started(server, serving)
        port = sock.getsockname()[1]
        log.info("http_serving", host=settings.http_host, port=port, recovered=recovered)
        if ready is not None:
            ready.set()
        await asyncio.shield(serving)
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await serving
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """Our own listening socket: a taken port is a clear error, not uvicorn's sys.exit."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


async def _started(server: _Server, serving: asyncio.Task[None]) -> None:
    """Wait until the server listens; re-raise if it failed on the way."""
    listening = asyncio.create_task(server.listening.wait())
    try:
        await asyncio.wait({serving, listening}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
    if serving.done():
        serving.result()
        raise RuntimeError("the HTTP server stopped while starting")


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: `cli._guarded` owns SIGTERM/SIGINT."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _prune_daily(app: App) -> None:
    """Drop finished inbox rows older than eight days, at start and once a day."""
    while True:
        try:
            pruned = await app.store.inbox_prune(datetime.now(UTC) - INBOX_KEEP)
            log.info("inbox_pruned", rows=pruned)
        except Exception:
            log.exception("inbox_prune_failed")
        await asyncio.sleep(PRUNE_EVERY_S)


async def _close(
    app: App, whatsapp: WhatsAppChannel | None, telegram: TelegramChannel | None
) -> None:
    if telegram is not None:
        with _logged("telegram_stop_failed"):
            await telegram.stop()
    try:
        await asyncio.wait_for(app.handler.drain(), DRAIN_S)
    except TimeoutError:  # unfinished entries stay in the inbox for the next start
        log.warning("drain_timeout", seconds=DRAIN_S)
    await app.aclose()
    if whatsapp is not None:  # after the app: no turn can send any more
        await whatsapp.stop()


@contextlib.contextmanager
def _logged(event: str) -> Iterator[None]:
    try:
        yield
    except Exception:
        log.exception(event)
