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
from config.settings import Settings
from memory.types import SessionKey

QUIT = ("/quit", "/exit", "/salir")


class ConsoleOutbox:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
        for text in texts:
            self.out.write(f"bot> {text}\n")
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
    """Read lines until end of input or /quit; each line is one message. Exit status 0."""
    src, out = src or sys.stdin, out or sys.stdout
    session_key = SessionKey("console", session)
    key = user = str(session_key)
    handler.register("console", ConsoleOutbox(out))
    lang = settings.language
    out.write(t(lang, "welcome_console", key=key, model=settings.chat_model) + "\n")
    if debug:
        await handler.set_debug(key, True, user, datetime.now(UTC))
    await handler.recover()
    await handler.drain()
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
    await handler.drain_folds()
    return 0
