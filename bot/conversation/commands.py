"""The chat commands: /start /help /reset /undo /forget /summary /debug (and /quit apart)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import structlog

from bot.conversation.texts import t
from memory.types import InboxEntry

if TYPE_CHECKING:
    from bot.conversation.handler import ConversationHandler

log = structlog.get_logger(__name__)
Command = Callable[["ConversationHandler", InboxEntry, str], Awaitable[list[str]]]


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse(text: str) -> tuple[str, str]:
    """`/debug@my_bot on` → ("debug", "on")."""
    head, _, rest = text.strip().partition(" ")
    return head[1:].split("@", 1)[0].lower(), rest.strip().lower()


async def run(handler: ConversationHandler, entry: InboxEntry, text: str) -> list[str]:
    name, arg = parse(text)
    command = _COMMANDS.get(name)
    if command is None:
        return [t(handler.language, "unknown_command")]
    log.info("command", command=name)
    return await command(handler, entry, arg)


def _now() -> datetime:
    return datetime.now(UTC)


async def _start(h: ConversationHandler, entry: InboxEntry, _arg: str) -> list[str]:
    return [t(h.language, "start")]


async def _help(h: ConversationHandler, entry: InboxEntry, _arg: str) -> list[str]:
    extra = t(h.language, "help_operator") if h.settings.is_operator(entry.user) else ""
    return [t(h.language, "help") + extra]


async def _reset(h: ConversationHandler, entry: InboxEntry, _arg: str) -> list[str]:
    state = await h.store.turn_state(entry.key, 1, _now())
    await h.store.start_episode(state.session_id, "manual", None, _now())
    return [t(h.language, "reset")]


async def _undo(h: ConversationHandler, entry: InboxEntry, _arg: str) -> list[str]:
    state = await h.store.turn_state(entry.key, 1, _now())
    reopened = await h.store.undo_reset(
        state.session_id, _now(), within_s=h.settings.undo_minutes * 60
    )
    return [t(h.language, "undo_ok" if reopened else "undo_none")]


async def _forget(h: ConversationHandler, entry: InboxEntry, arg: str) -> list[str]:
    if arg not in ("confirm", "confirmar", "yes", "si", "sí"):
        return [t(h.language, "forget_confirm")]
    await h.engine.folds.forget(entry.key)
    await h.store.forget(entry.key)
    log.info("forgotten")
    return [t(h.language, "forget_done")]


async def _summary(h: ConversationHandler, entry: InboxEntry, _arg: str) -> list[str]:
    state = await h.store.peek_state(entry.key, h.settings.window_exchanges)
    if state is None or (state.summary is None and not (state.window or state.pending)):
        return [t(h.language, "summary_empty")]
    if state.summary is None:
        return [t(h.language, "summary_none", count=len(state.window) + len(state.pending))]
    return [t(h.language, "summary", version=state.summary.version, text=state.summary.text)]


async def _debug(h: ConversationHandler, entry: InboxEntry, arg: str) -> list[str]:
    if not h.settings.is_operator(entry.user):
        log.info("debug_refused")
        return [t(h.language, "not_operator")]
    if arg not in ("on", "off"):
        return [t(h.language, "debug_usage")]
    await h.store.set_debug(entry.key, arg == "on", _now())
    return [t(h.language, "debug_on" if arg == "on" else "debug_off")]


_COMMANDS: dict[str, Command] = {
    "start": _start,
    "help": _help,
    "reset": _reset,
    "undo": _undo,
    "forget": _forget,
    "summary": _summary,
    "debug": _debug,
}
