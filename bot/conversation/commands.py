"""The chat commands: /start /help /reset /undo /forget /summary /debug /usage (and /quit
apart)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

import structlog

from bot.conversation.texts import t
from bot.conversation.usage_view import build_report, chat_lines
from config.settings import Settings
from memory.episodes import Episodes
from memory.store import Store
from memory.store.usage import UsageQueries
from memory.types import Arrival, InboxEntry, SessionKey

log = structlog.get_logger(__name__)

# what a command is asked from: a stored inbox entry (a dry run never holds a command)
Message = InboxEntry | Arrival
FORGET_WAIT_S = 1.0  # how long /forget waits for a reader to let go before replying


class GroupAdmins(Protocol):
    """A channel's answer to "does `user` administer the group chat of `key`?" (Telegram:
    `getChatMember`). Commands never import a channel; the channel registers this."""

    async def is_admin(self, key: SessionKey, user: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Context:
    """What the commands work with: the episode lifecycle for /reset /undo /forget, the
    store for /summary and /debug, each channel's group administrators for /forget."""

    settings: Settings
    episodes: Episodes
    store: Store
    admins: dict[str, GroupAdmins] = field(default_factory=dict)  # by channel

    @property
    def language(self) -> str:
        return self.settings.language


Command = Callable[[Context, Message, str], Awaitable[list[str]]]


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse(text: str) -> tuple[str, str]:
    """`/debug@my_bot on` → ("debug", "on")."""
    head, _, rest = text.strip().partition(" ")
    return head[1:].split("@", 1)[0].lower(), rest.strip().lower()


async def run(handler: Context, entry: Message, text: str) -> list[str]:
    name, arg = parse(text)
    command = _COMMANDS.get(name)
    if command is None:
        return [t(handler.language, "unknown_command")]
    log.info("command", command=name)
    return await command(handler, entry, arg)


def _now() -> datetime:
    return datetime.now(UTC)


async def _start(h: Context, entry: Message, _arg: str) -> list[str]:
    return [t(h.language, "start")]


async def _help(h: Context, entry: Message, _arg: str) -> list[str]:
    extra = t(h.language, "help_operator") if h.settings.is_operator(entry.user) else ""
    return [t(h.language, "help") + extra]


async def _reset(h: Context, entry: Message, _arg: str) -> list[str]:
    await h.episodes.reset(entry.key)
    return [t(h.language, "reset")]


async def _undo(h: Context, entry: Message, _arg: str) -> list[str]:
    reopened = await h.episodes.undo(entry.key)
    return [t(h.language, "undo_ok" if reopened else "undo_none")]


async def _forget(h: Context, entry: Message, arg: str) -> list[str]:
    if not await _may_erase(h, entry):
        log.info("forget_refused")
        return [t(h.language, "forget_not_admin")]
    if arg not in ("confirm", "confirmar", "yes", "si", "sí"):
        return [t(h.language, "forget_confirm")]
    await h.episodes.forget(entry.key)
    # "Erased" only once it is true; a reader holding an old snapshot delays the last
    # copies, which the store wipes in the background as soon as it lets go.
    erased = await h.store.erased(wait_s=FORGET_WAIT_S)
    if not erased:
        log.info("forget_pending")
    return [t(h.language, "forget_done" if erased else "forget_pending")]


async def _may_erase(h: Context, entry: Message) -> bool:
    """A shared group's conversation (one key for every member) is erased only by an
    operator or an administrator of the group; anyone may erase a conversation of their own."""
    key = entry.session
    if key.member is not None or entry.key == entry.user or h.settings.is_operator(entry.user):
        return True
    admins = h.admins.get(key.channel)
    return admins is not None and await admins.is_admin(key, entry.user)


async def _summary(h: Context, entry: Message, _arg: str) -> list[str]:
    state = await h.store.peek_state(entry.key, h.settings.window_exchanges)
    if state is None or (state.summary is None and not (state.window or state.pending)):
        return [t(h.language, "summary_empty")]
    if state.summary is None:
        return [t(h.language, "summary_none", count=len(state.window) + len(state.pending))]
    return [t(h.language, "summary", version=state.summary.version, text=state.summary.text)]


async def _debug(h: Context, entry: Message, arg: str) -> list[str]:
    """Operators switch their own dry run; switching it off is never refused (a former
    operator may always clear a flag left from before the revocation)."""
    if arg != "off" and not h.settings.is_operator(entry.user):
        log.info("debug_refused")
        return [t(h.language, "not_operator")]
    if arg not in ("on", "off"):
        return [t(h.language, "debug_usage")]
    await h.store.set_debug(entry.key, arg == "on", _now(), entry.user)
    return [t(h.language, "debug_on" if arg == "on" else "debug_off")]


async def _usage(h: Context, entry: Message, arg: str) -> list[str]:
    """Operators: provider-reported usage and cost of this chat (`/usage all`: every key)."""
    if not h.settings.is_operator(entry.user):
        log.info("usage_refused")
        return [t(h.language, "not_operator")]
    if arg not in ("", "all"):
        return [t(h.language, "usage_usage")]
    if not isinstance(h.store, UsageQueries):
        return [chat_lines(build_report([]), h.language)]
    key = None if arg == "all" else entry.key
    report = build_report(await h.store.usage_totals(key), key=key)
    return [chat_lines(report, h.language)]


_COMMANDS: dict[str, Command] = {
    "start": _start,
    "help": _help,
    "reset": _reset,
    "undo": _undo,
    "forget": _forget,
    "summary": _summary,
    "debug": _debug,
    "usage": _usage,
}
