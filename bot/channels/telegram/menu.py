"""The bot's command menu (setMyCommands): everyone's in the configured language, and
operators' private chats also list /debug and /usage."""

from __future__ import annotations

import structlog
from telegram import Bot, BotCommand, BotCommandScopeChat
from telegram.error import TelegramError

from config.settings import Settings

log = structlog.get_logger(__name__)

CHANNEL = "telegram"
OPERATOR_ONLY = ("debug", "usage")
COMMANDS: dict[str, dict[str, str]] = {
    "es": {
        "start": "Empezar",
        "help": "Ayuda y comandos",
        "reset": "Empezar de cero",
        "undo": "Deshacer el último reinicio",
        "summary": "Lo que recuerdo ahora",
        "forget": "Borrar todos tus datos",
        "debug": "Modo depuración (on|off)",
        "usage": "Tokens y coste estimado ([all])",
    },
    "en": {
        "start": "Start",
        "help": "Help and commands",
        "reset": "Start over",
        "undo": "Undo the last reset",
        "summary": "What I remember now",
        "forget": "Erase all your data",
        "debug": "Debug mode (on|off)",
        "usage": "Tokens and estimated cost ([all])",
    },
}


async def set_commands(bot: Bot, settings: Settings) -> None:
    """Everyone's command menu in the configured language; operators also see /debug
    and /usage."""
    texts = COMMANDS.get(settings.language, COMMANDS["en"])
    public = [BotCommand(n, text) for n, text in texts.items() if n not in OPERATOR_ONLY]
    operator = [*public, *(BotCommand(n, texts[n]) for n in OPERATOR_ONLY)]
    try:
        await bot.set_my_commands(public)
    except TelegramError as exc:
        log.warning("telegram_set_commands_failed", error=str(exc))
    for chat in _operator_chats(settings.operators):
        try:  # fails until the operator has opened a chat with the bot; harmless
            await bot.set_my_commands(operator, scope=BotCommandScopeChat(chat))
        except TelegramError as exc:
            log.info("telegram_operator_commands_skipped", error=str(exc))


def _operator_chats(operators: tuple[str, ...]) -> list[int]:
    """Private chat ids of Telegram operators (a user's private chat id is their user id)."""
    chats = []
    for operator in operators:
        channel, _, ident = operator.partition(":")
        if channel == CHANNEL and ident.lstrip("-").isdigit():
            chats.append(int(ident))
    return chats
