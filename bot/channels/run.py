"""`ventana run` with real channels: Telegram and/or WhatsApp in one process.

Order matters. Each channel registers its outbox and queues its own inbox entries a
previous run left unfinished (exactly once) before its intake starts (polling, its
webhook route answering 200), so a message is never queued twice nor answered into the
void. The HTTP server (`/healthz` in every mode) listens before Telegram starts, so a
Bot API unreachable at start delays only Telegram; its webhook route answers 503 (Telegram
retries) until then.
Cancellation (SIGTERM, Ctrl-C, see `cli._guarded`) stops intake first, lets turns in
flight deliver for a moment, then stops the channels and closes the app.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import httpx
import structlog

from bot.app import App
from bot.channels.http import build_http_app
from bot.channels.server import serving
from bot.channels.whatsapp.channel import WhatsAppChannel
from config.settings import Settings
from providers.base import ChatModel

if TYPE_CHECKING:
    from bot.channels.telegram.channel import TelegramChannel

log = structlog.get_logger(__name__)

INBOX_KEEP = timedelta(days=8)  # Meta and Telegram redeliver for days; dedupe must outlive that
PRUNE_EVERY_S = 24 * 3600.0
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
            whatsapp = WhatsAppChannel(app.handler, settings, http_client=whatsapp_client)
        telegram = _telegram(app) if settings.telegram_enabled else None
        await _serve(app, whatsapp, telegram, ready)
    finally:
        await _close(app, whatsapp, telegram)
    return 0


def _telegram(app: App) -> TelegramChannel:
    from bot.channels.telegram.channel import (
        TelegramChannel,  # python-telegram-bot only when Telegram is on
    )

    return TelegramChannel(app.handler, app.settings)


async def _serve(
    app: App,
    whatsapp: WhatsAppChannel | None,
    telegram: TelegramChannel | None,
    ready: asyncio.Event | None,
) -> None:
    """The HTTP server first (`/healthz` in every mode, the webhooks), then Telegram, which
    waits out an unreachable Bot API while the rest is already served."""
    recovered = await whatsapp.start() if whatsapp is not None else 0
    pruner = asyncio.create_task(_prune_daily(app), name="inbox-prune")
    webhook = telegram if telegram is not None and app.settings.telegram_webhook_url else None
    http = build_http_app(app.store.ping, whatsapp=whatsapp, telegram=webhook)
    try:
        async with serving(http, app.settings) as server:
            if telegram is not None:
                await telegram.start()
            mode = None if telegram is None else "webhook" if webhook else "polling"
            log.info("channels_running", telegram=mode, recovered=recovered)
            if ready is not None:
                ready.set()
            await asyncio.shield(server)
    finally:
        pruner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pruner


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
