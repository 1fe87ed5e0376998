"""Streaming a reply into a Telegram private chat as a draft (`sendMessageDraft`).

The model's text reaches `DraftStream.show` as it grows; a background task sends the
latest text at most every `every` seconds, so a slow Bot API never slows the model's
stream and Telegram's rate limits are kept. A draft is an ephemeral preview: the final
message (the whole reply through the noise filter, split and formatted, or the apology)
is sent afterwards as always, and replaces it.

Groups do not stream: a draft exists only in private chats, and the alternative, one
message edited every second or two, shows every member a half-written text (and keeps
showing it if the reply then turns out to be noise), notifies on the first send, and
spends the group's edit budget (about 20 a minute) that replies in other turns need.
Any failure of a draft only ends the preview for that turn; it never touches the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import structlog
from telegram import Bot
from telegram.error import TelegramError

from bot.channels.telegram.markup import telegram_chunks

log = structlog.get_logger(__name__)

DRAFT_EVERY_S = 0.8
_draft_ids = itertools.count(1)


class DraftStream:
    """One turn's draft in one private chat."""

    def __init__(self, bot: Bot, chat: int, *, every: float = DRAFT_EVERY_S) -> None:
        self.bot = bot
        self.chat = chat
        self.every = every
        self.draft_id = next(_draft_ids)
        self.sent = 0  # drafts delivered
        self._latest = ""
        self._shown = ""
        self._changed = asyncio.Event()
        self._broken = False

    async def show(self, text: str) -> None:
        """The reply so far; cheap and never raises (the model's stream waits on it)."""
        self._latest = text
        self._changed.set()

    async def run(self) -> None:
        while not self._broken:
            await self._changed.wait()
            self._changed.clear()
            if self._latest != self._shown:
                await self._send(self._latest)
            await asyncio.sleep(self.every)

    async def _send(self, text: str) -> None:
        chunks = telegram_chunks(text)
        if not chunks:
            return
        first = chunks[0]  # a preview: what fits one message
        try:
            await self.bot.send_message_draft(
                self.chat, self.draft_id, first.text, entities=first.entities or None
            )
        except TelegramError as exc:
            log.info("telegram_draft_failed", error=type(exc).__name__)
            self._broken = True
            return
        self._shown = text
        self.sent += 1


@contextlib.asynccontextmanager
async def draft_stream(
    bot: Bot, chat: int, *, every: float = DRAFT_EVERY_S
) -> AsyncIterator[DraftStream]:
    """A `DraftStream` whose sender runs while the block does."""
    stream = DraftStream(bot, chat, every=every)
    task = asyncio.create_task(stream.run(), name=f"draft:{chat}")
    try:
        yield stream
    finally:
        task.cancel()
        await asyncio.wait({task})  # keeps our own cancellation, unlike awaiting it
