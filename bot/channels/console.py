"""The console channel: chat in a terminal through the same handler as every channel."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import TextIO

from bot.conversation.handler import ConversationHandler
from bot.conversation.inbound import Inbound
from bot.conversation.texts import t
from bot.terminal import visible
from config.settings import Settings
from memory.types import SessionKey

QUIT = ("/quit", "/exit", "/salir")


class ConsoleOutbox:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
        for text in texts:
            self.out.write(f"bot> {visible(text)}\n")
        self.out.flush()

    @contextlib.asynccontextmanager
    async def working(self, key: SessionKey) -> AsyncIterator[None]:
        yield


PROMPT = "you> "


def _reader(
    loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None], src: TextIO
) -> None:
    """Blocking reads on a daemon thread, so Ctrl-C never waits for a line."""
    for line in src:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, None)


def _line_editor(
    loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None], turn: threading.Semaphore
) -> None:
    """A terminal: `input()` with readline (arrows, history, Ctrl-A/E), one prompt per turn
    so the prompt never shows up before the bot's reply."""
    import readline  # noqa: F401 - importing it is what gives input() line editing

    while True:
        turn.acquire()
        try:
            line = input(PROMPT)
        except (EOFError, KeyboardInterrupt):
            break
        loop.call_soon_threadsafe(queue.put_nowait, line + "\n")
    loop.call_soon_threadsafe(queue.put_nowait, None)


async def run_console(
    handler: ConversationHandler,
    settings: Settings,
    session: str,
    *,
    debug: bool = False,
    src: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """Read lines until end of input or /quit; each line is one message. Exit status 0.

    `debug` makes this run a dry run: switched on at the start (unless an earlier
    `/debug on` left it on) and off again however the run ends: /quit, end of input,
    Ctrl-C, an error."""
    src, out = src or sys.stdin, out or sys.stdout
    session_key = SessionKey("console", session)
    key = user = str(session_key)
    handler.register("console", ConsoleOutbox(out))
    kept = await handler.debug_on(key, user)
    switched = debug and not kept
    if switched:
        await handler.set_debug(key, True, user, datetime.now(UTC))
    try:
        out.write(_welcome(settings, key, switched=switched, kept=kept))
        await handler.recover()
        await handler.drain()
        await _chat(handler, session_key, src, out)
    finally:
        if switched:
            await handler.set_debug(key, False, user, datetime.now(UTC))
    await handler.drain_folds()
    return 0


def _welcome(settings: Settings, key: str, *, switched: bool, kept: bool) -> str:
    """The start banner; when debug is on, it says so and how to switch it off."""
    lang = settings.language
    lines = [t(lang, "welcome_console", key=key, model=settings.chat_model)]
    if switched or kept:
        lines.append(t(lang, "console_debug_kept" if kept else "console_debug_run"))
    return "\n".join(lines) + "\n"


async def _chat(
    handler: ConversationHandler, session_key: SessionKey, src: TextIO, out: TextIO
) -> None:
    """One message per line read, until end of input or /quit."""
    user = str(session_key)
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    loop, turn = asyncio.get_running_loop(), threading.Semaphore(0)
    editor = src is sys.stdin and out is sys.stdout and src.isatty()
    reader = (_line_editor, (loop, queue, turn)) if editor else (_reader, (loop, queue, src))
    threading.Thread(target=reader[0], args=reader[1], daemon=True).start()
    interactive = src.isatty()
    while True:
        if editor:
            turn.release()
        elif interactive:
            out.write(PROMPT)
            out.flush()
        line = await queue.get()
        if line is None or line.strip().lower() in QUIT:
            break
        if not line.strip():
            continue
        now = datetime.now(UTC)
        inbound = Inbound(
            session_key, line.rstrip("\n"), f"console-{now.timestamp():.6f}", now, user
        )
        await handler.handle(inbound)
