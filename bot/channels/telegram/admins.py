"""Who administers a Telegram group: `getChatMember`, for commands that need an admin."""

from __future__ import annotations

import structlog
from telegram import Bot, ChatMember
from telegram.error import TelegramError

from memory.types import SessionKey

log = structlog.get_logger(__name__)

ADMIN_STATUSES = frozenset({ChatMember.OWNER, ChatMember.ADMINISTRATOR})  # creator, admin


class TelegramAdmins:
    """Implements `bot.conversation.commands.GroupAdmins`; fails closed: an error of the
    Bot API (or a user id that is not a number) is "not an administrator"."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def is_admin(self, key: SessionKey, user: str) -> bool:
        try:
            member = await self.bot.get_chat_member(int(key.chat), int(user.partition(":")[2]))
        except (TelegramError, ValueError) as exc:
            log.warning("admin_check_failed", error=type(exc).__name__)
            return False
        return member.status in ADMIN_STATUSES
