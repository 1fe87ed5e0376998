"""Telegram `Update` → our `Inbound`: the only place that reads PTB message types.

What becomes a message for the handler:

* a new text message in a private chat;
* in a group, a text addressed to the bot: it mentions `@bot_username` (or the bot by a
  text mention), replies to one of the bot's messages, or is a command — `/cmd@bot`, or a
  bare `/cmd`, which Telegram only delivers to a bot it considers addressed. The mention
  is removed from the text;
* stickers, photos, voice notes, documents and other media, under the same rules, as
  `kind="unsupported"`: the handler answers that only text is understood.

An update whose fields have the wrong types (a number as text, a chat id that is not an
integer) raises `Malformed`: the channel records it as rejected instead of queueing a turn
that could never be delivered.

Everything else is ignored: edits of earlier messages (the bot answered the original;
re-answering an edit would fork the conversation), channel posts, service messages
(members joining, pins), callback queries and other update types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType

from bot.conversation.inbound import Inbound, InboundKind
from memory.types import SessionKey

ALLOWED_UPDATES = ("message",)
UNKNOWN_KEY = "telegram:unknown"  # where rejected updates without a valid chat are recorded
_MEDIA = (
    "sticker",
    "photo",
    "voice",
    "audio",
    "document",
    "video",
    "video_note",
    "animation",
    "location",
    "venue",
    "contact",
    "poll",
    "dice",
)
_GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is, from getMe: needed to tell whether a group message is for it."""

    id: int
    username: str


class Malformed(ValueError):
    """The update cannot be a message: its text says why (never quoting user content)."""


def to_inbound(update: Update, me: BotIdentity, group_mode: str) -> Inbound | None:
    """The `Inbound` for `update`, or None when the bot should not answer it."""
    message = update.message
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    problem = malformed(message)
    if problem is not None:
        raise Malformed(problem)
    kind = _kind(message)
    if kind is None:
        return None
    text = message.text or ""
    group = message.chat.type in _GROUPS
    if group:
        if not _addressed(message, me):
            return None
        text = strip_mention(text, me.username)
    user_id = message.from_user.id
    member = str(user_id) if group and group_mode == "per_user" else None
    key = SessionKey("telegram", str(message.chat.id), member)
    ts = message.date.astimezone(UTC) if message.date else datetime.now(UTC)
    return Inbound(key, text, str(update.update_id), ts, f"telegram:{user_id}", kind)


def malformed(message: Message) -> str | None:
    """Why `message` cannot be handled, or None. PTB does not check JSON types."""
    if message.chat is None or not _is_int(message.chat.id):
        return "chat.id is not an integer"
    if message.from_user is not None and not _is_int(message.from_user.id):
        return "from.id is not an integer"
    if message.text is not None and not isinstance(message.text, str):
        return "text is not a string"
    if message.caption is not None and not isinstance(message.caption, str):
        return "caption is not a string"
    if message.date is not None and not isinstance(message.date, datetime):
        return "date is not a timestamp"
    return None


def chat_key(update: Update) -> str:
    """The chat's key when the update names a valid chat; `telegram:unknown` otherwise."""
    message = update.message
    ident = getattr(getattr(message, "chat", None), "id", None)
    return f"telegram:{ident}" if _is_int(ident) else UNKNOWN_KEY


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def chat_id(key: SessionKey) -> int:
    """`telegram:<chat_id>[:<user_id>]` → chat_id."""
    return int(key.chat)


def strip_mention(text: str, username: str) -> str:
    """Remove `@username` (any case) and tidy the spaces it leaves behind."""
    if not username:
        return text.strip()
    pattern = re.compile(rf"(?<![\w/])@{re.escape(username)}\b", re.IGNORECASE)
    return re.sub(r"[ \t]{2,}", " ", pattern.sub("", text)).strip()


def _kind(message: Message) -> InboundKind | None:
    if message.text is not None:
        return "text"
    if any(getattr(message, name) for name in _MEDIA):
        return "unsupported"
    return None  # service messages: joins, pins, title changes…


def _addressed(message: Message, me: BotIdentity) -> bool:
    reply = message.reply_to_message
    if reply is not None and reply.from_user is not None and reply.from_user.id == me.id:
        return True
    text = message.text or message.caption or ""
    if message.text is not None and text.startswith("/"):
        head = text.split(maxsplit=1)[0]
        _, at, target = head.partition("@")
        return not at or target.lower() == me.username.lower()
    return _mentions(message, me)


def _mentions(message: Message, me: BotIdentity) -> bool:
    wanted = f"@{me.username}".lower()
    kinds: list[str | None] = [MessageEntity.MENTION, MessageEntity.TEXT_MENTION]
    entities = (
        message.parse_entities(kinds)
        if message.text is not None
        else message.parse_caption_entities(kinds)
    )
    for entity, value in entities.items():
        if entity.type == MessageEntity.MENTION and value.lower() == wanted:
            return True
        if entity.user is not None and entity.user.id == me.id:
            return True
    return False
