"""Delivering replies to Telegram: Markdown as entities (plain when it cannot be), split,
flood control, blocked users, typing."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta

import structlog
from telegram import Bot
from telegram.constants import ChatAction
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

from bot.channels.telegram.convert import chat_id
from bot.channels.telegram.markup import Chunk, telegram_chunks
from bot.channels.telegram.stream import DRAFT_EVERY_S, draft_stream
from memory.types import SessionKey
from providers.streaming import TextSink

log = structlog.get_logger(__name__)

TYPING_EVERY_S = 4.0  # Telegram shows "typing…" for about five seconds per action
MAX_RETRY_AFTER_S = 60.0
MAX_FLOOD_RETRIES = 3


class TelegramOutbox:
    """The handler's `Outbox` for Telegram. Keeps no per-chat state."""

    def __init__(
        self,
        bot: Bot,
        *,
        typing_every: float = TYPING_EVERY_S,
        max_retry_after: float = MAX_RETRY_AFTER_S,
        streaming: bool = False,
        draft_every: float = DRAFT_EVERY_S,
    ) -> None:
        self.bot = bot
        self.streaming = streaming
        self.draft_every = draft_every
        self.typing_every = typing_every
        self.max_retry_after = max_retry_after

    async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
        """Send each text, its Markdown rendered as entities (no parse mode; plain text when
        it cannot be rendered or Telegram refuses the entities), split to the limit.

        A chat that blocked the bot or no longer exists is logged and dropped: retrying
        could never succeed. Network failures propagate, so the inbox entry stays
        unfinished and its stored replies are delivered again on the next start.
        """
        target = _target(key)
        if target is None:  # an entry an older version queued from a malformed update
            log.warning("telegram_bad_key_dropped")
            return
        for text in texts:
            for chunk in telegram_chunks(text):
                try:
                    await self._send_formatted(target, chunk)
                except Forbidden:
                    log.info("telegram_blocked", key=str(key))
                    return
                except BadRequest as exc:
                    log.warning("telegram_send_rejected", key=str(key), error=exc.message)
                    return

    async def _send_formatted(self, target: int, chunk: Chunk) -> None:
        try:
            await self._send_one(target, chunk)
        except BadRequest as exc:
            if not chunk.entities or "entit" not in exc.message.lower():
                raise
            log.info("telegram_entities_refused", error=exc.message)
            await self._send_one(target, Chunk(chunk.text))

    async def _send_one(self, target: int, chunk: Chunk) -> None:
        for attempt in range(MAX_FLOOD_RETRIES + 1):
            try:
                await self.bot.send_message(target, chunk.text, entities=chunk.entities or None)
                return
            except RetryAfter as exc:
                if attempt == MAX_FLOOD_RETRIES:
                    raise
                delay = min(retry_after_seconds(exc), self.max_retry_after)
                log.info("telegram_flood_wait", seconds=delay, attempt=attempt + 1)
                await asyncio.sleep(delay)

    @contextlib.asynccontextmanager
    async def live(self, key: SessionKey) -> AsyncIterator[TextSink | None]:
        """Where the reply goes while it is written: a draft in a private chat, nowhere
        in a group (see `stream.py` for why) or with streaming off."""
        target = _target(key)
        if not self.streaming or target is None or target < 0:
            yield None
            return
        async with draft_stream(self.bot, target, every=self.draft_every) as stream:
            yield stream.show

    @contextlib.asynccontextmanager
    async def working(self, key: SessionKey) -> AsyncIterator[None]:
        """Show "typing…" in the chat until the block exits."""
        target = _target(key)
        if target is None:
            yield
            return
        task = asyncio.create_task(self._typing(target), name="typing")
        try:
            yield
        finally:
            task.cancel()
            await asyncio.wait({task})  # unlike awaiting it, keeps our own cancellation

    async def _typing(self, target: int) -> None:
        while True:
            try:
                await self.bot.send_chat_action(target, ChatAction.TYPING)
            except (Forbidden, BadRequest):
                return
            except TelegramError as exc:  # cosmetic: never let it disturb the turn
                log.debug("telegram_typing_failed", error=str(exc))
            await asyncio.sleep(self.typing_every)


def _target(key: SessionKey) -> int | None:
    try:
        return chat_id(key)
    except (ValueError, IndexError):
        return None


def retry_after_seconds(exc: RetryAfter) -> float:
    """`retry_after` as seconds, whichever type this PTB version returns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value)
