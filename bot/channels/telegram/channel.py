"""The Telegram channel: python-telegram-bot v22 for the Bot API, our own durable intake.

An update is committed to the conversation handler's inbox before Telegram is told it
was received. In polling mode a small loop of our own calls getUpdates and only asks for
the next batch (offset = last update_id + 1, which is what confirms a batch to Telegram)
after every update of the current one is committed; PTB's `Updater` would confirm on its
next call whatever happened to our processing, so it is not used. In webhook mode
`handle_webhook` answers 200 only after the commit; a database failure answers 500, so
Telegram delivers the update again. Malformed input (not JSON, wrong field types) is
acknowledged too, recorded in the inbox as rejected with its reason, never processed.
Redeliveries are deduplicated by `update_id`.

Which updates become messages (groups, media, edits, which are ignored) is described in
`bot.channels.telegram.convert`; how replies are delivered, in `bot.channels.telegram.outbox`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import warnings
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from telegram import Update
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError
from telegram.ext import Application
from telegram.request import BaseRequest
from telegram.warnings import PTBUserWarning

from bot.channels.telegram.admins import TelegramAdmins
from bot.channels.telegram.convert import (
    ALLOWED_UPDATES,
    UNKNOWN_KEY,
    BotIdentity,
    Malformed,
    chat_key,
    to_inbound,
)
from bot.channels.telegram.menu import set_commands
from bot.channels.telegram.outbox import TelegramOutbox
from bot.conversation.handler import ConversationHandler
from config.settings import Settings

log = structlog.get_logger(__name__)

CHANNEL = "telegram"
POLL_TIMEOUT_S = 30
POLL_READ_MARGIN_S = 5.0  # a long poll's read timeout is its timeout plus this (PTB's way)
# Polling reads getUpdates raw (`_poll`), which PTB would rather see through get_updates.
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.getUpdates'", category=PTBUserWarning)
MAX_BACKOFF_S = 30.0


class TelegramChannel:
    """One bot, in polling mode or (with `TELEGRAM_WEBHOOK_URL`) webhook mode."""

    def __init__(
        self,
        handler: ConversationHandler,
        settings: Settings,
        *,
        request: BaseRequest | None = None,
        get_updates_request: BaseRequest | None = None,
        poll_timeout: int = POLL_TIMEOUT_S,
        retry_delay: float = 1.0,
        drain_timeout: float = 10.0,
    ) -> None:
        if settings.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN is not set")
        builder = (
            Application.builder()
            .token(settings.telegram_bot_token.get_secret_value())
            .base_url(settings.telegram_base_url)
            .updater(None)
        )
        if request is not None:
            builder = builder.request(request)
        if get_updates_request is not None:
            builder = builder.get_updates_request(get_updates_request)
        self.handler = handler
        self.settings = settings
        self.application = builder.build()
        self.outbox = TelegramOutbox(self.application.bot, streaming=settings.streaming == "on")
        self.poll_timeout = poll_timeout
        self.retry_delay = retry_delay
        self.drain_timeout = drain_timeout
        self.me: BotIdentity | None = None
        self._poller: asyncio.Task[None] | None = None
        self._accepting = False  # the webhook route answers 200 only once started

    @property
    def webhook_mode(self) -> bool:
        return bool(self.settings.telegram_webhook_url)

    async def start(self) -> None:
        """Log in (getMe), register commands, recover the inbox, then poll or set the webhook."""
        try:
            await self._reachable("getMe", self.application.initialize)
        except InvalidToken:  # PTB's own message quotes the token: never let it reach a log
            raise ValueError(
                "Telegram rejected TELEGRAM_BOT_TOKEN; copy it again from @BotFather"
            ) from None
        bot = self.application.bot
        self.me = BotIdentity(bot.id, bot.username)
        self.handler.register(CHANNEL, self.outbox, TelegramAdmins(bot))
        await set_commands(self.application.bot, self.settings)
        await self.handler.recover(CHANNEL)
        if self.webhook_mode:
            await self._reachable("setWebhook", self._set_webhook)
        else:  # getUpdates needs no webhook set
            await self._reachable(
                "deleteWebhook", lambda: bot.delete_webhook(drop_pending_updates=False)
            )
            self._poller = asyncio.create_task(self._poll(), name="telegram:poll")
        self._accepting = True
        log.info(
            "telegram_started",
            bot=self.me.username,
            mode="webhook" if self.webhook_mode else "polling",
        )

    async def stop(self) -> None:
        """Stop taking updates, give running turns a moment to deliver, log out.

        The webhook stays registered: Telegram keeps updates while we are down and
        delivers them when we are back.
        """
        self._accepting = False
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.wait({self._poller})
            self._poller = None
        try:
            # shielded: on timeout the turns go on; whoever closes the app decides their fate
            await asyncio.wait_for(asyncio.shield(self.handler.drain()), self.drain_timeout)
        except TimeoutError:
            log.warning("telegram_stop_drain_timeout")
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()
        self.me = None
        log.info("telegram_stopped")

    async def handle_webhook(self, body: bytes, secret_header: str | None) -> int:
        """The HTTP status for one webhook call; 200 only once the update is committed."""
        if not self._secret_ok(secret_header):
            log.warning("telegram_webhook_forbidden")
            return 403
        if not self._accepting:
            return 503  # not started yet: Telegram retries later
        try:
            update = self._parse(body)
            if isinstance(update, str):  # acknowledged: Telegram would resend it forever
                await self._reject(UNKNOWN_KEY, _body_id(body), update)
            else:
                await self._commit(update)
        except Exception:  # the database: a real failure, Telegram delivers it again
            log.exception("telegram_commit_failed")
            return 500
        return 200

    # -- intake -------------------------------------------------------------------------

    async def _poll(self) -> None:
        """getUpdates forever; the offset moves past a batch only once all of it is committed.

        The batch is read raw and each update parsed on its own (PTB's get_updates parses the
        batch whole: one update it cannot read would fail the batch on every retry, and it
        logs the batch's raw data, message bodies included): an unreadable update is
        recorded as rejected, like a webhook's, and the offset moves past it."""
        bot = self.application.bot
        offset: int | None = None
        delay = self.retry_delay
        while True:
            try:
                batch = await bot.do_api_request(
                    "getUpdates",
                    api_kwargs={
                        "offset": offset,
                        "timeout": self.poll_timeout,
                        "allowed_updates": list(ALLOWED_UPDATES),
                    },
                    read_timeout=self.poll_timeout + POLL_READ_MARGIN_S,
                )
                updates = [data for data in batch if isinstance(data, dict)]
                for data in updates:
                    update = self._update_of(data)
                    if isinstance(update, str):
                        await self._reject(UNKNOWN_KEY, str(data.get("update_id")), update)
                    else:
                        await self._commit(update)
            except InvalidToken:
                log.error("telegram_token_revoked")  # nothing to retry: polling ends here
                return
            except Exception as exc:  # network, Bot API or database: retry the same batch
                log.warning("telegram_poll_failed", error=self._redact(exc), retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
                continue
            delay = self.retry_delay
            ids = [d["update_id"] for d in updates if type(d.get("update_id")) is int]
            if ids:
                offset = max(ids) + 1

    async def _commit(self, update: Update) -> None:
        """Make `update` durable (or decide to ignore it); processing goes on in the background."""
        assert self.me is not None
        try:
            inbound = to_inbound(update, self.me, self.settings.group_mode)
        except Exception as exc:  # a malformed update must not block the ones behind it
            reason = str(exc) if isinstance(exc, Malformed) else f"unreadable ({_name(exc)})"
            await self._reject(chat_key(update), str(update.update_id), reason)
            return
        if inbound is None:
            log.debug("telegram_update_ignored", update_id=update.update_id)
            return
        future = await self.handler.submit(inbound)
        if future is not None:
            future.add_done_callback(_observe)

    def _parse(self, body: bytes) -> Update | str:
        """The update, or why the body is not one."""
        try:
            data: Any = json.loads(body)
        except (ValueError, RecursionError):
            return "not JSON"
        return self._update_of(data)

    def _update_of(self, data: Any) -> Update | str:
        """The update in decoded JSON, or why it is not one."""
        if not isinstance(data, dict) or type(data.get("update_id")) is not int:
            return "not an update (no integer update_id)"
        try:
            return Update.de_json(data, self.application.bot)
        except Exception as exc:
            return f"unreadable ({_name(exc)})"

    async def _reject(self, key: str, external_id: str, reason: str) -> None:
        """Record malformed input as rejected with its reason: answered 200, never retried."""
        fresh = await self.handler.reject(key, external_id, reason, datetime.now(UTC))
        log.warning("telegram_update_rejected", id=external_id, reason=reason, fresh=fresh)

    def _redact(self, exc: BaseException) -> str:
        return repr(exc).replace(self.application.bot.token, "<token>")

    def _secret_ok(self, header: str | None) -> bool:
        expected = self.settings.telegram_webhook_secret
        if expected is None or header is None:
            return False
        return hmac.compare_digest(header.encode(), expected.get_secret_value().encode())

    # -- setup --------------------------------------------------------------------------

    async def _reachable(self, what: str, call: Callable[[], Awaitable[object]]) -> None:
        """`call`, retried with backoff while the Bot API is unreachable or failing (5xx);
        one warning line per attempt, as for a blip while polling. Refusals propagate."""
        delay = self.retry_delay
        while True:
            try:
                await call()
                return
            except (InvalidToken, BadRequest, Forbidden):
                raise
            except NetworkError as exc:  # also TimedOut; PTB maps 5xx here too
                log.warning(
                    "telegram_unreachable", call=what, error=self._redact(exc), retry_in=delay
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)

    async def _set_webhook(self) -> None:
        settings = self.settings
        assert settings.telegram_webhook_url is not None
        secret = settings.telegram_webhook_secret
        try:
            await self.application.bot.set_webhook(
                settings.telegram_webhook_url,
                allowed_updates=ALLOWED_UPDATES,
                secret_token=secret.get_secret_value() if secret is not None else None,
                drop_pending_updates=False,
            )
        except BadRequest as exc:  # e.g. not HTTPS, a port Telegram refuses, an unknown host
            raise ValueError(f"Telegram refused TELEGRAM_WEBHOOK_URL: {exc.message}") from None


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def _body_id(body: bytes) -> str:
    """A stable id for a body without an update_id: a redelivery is recorded once."""
    return "sha256:" + hashlib.sha256(body).hexdigest()[:32]


def _observe(future: asyncio.Future[list[str]]) -> None:
    """Consume the outcome of a background turn (the serial already logged a failure)."""
    if not future.cancelled():
        future.exception()
