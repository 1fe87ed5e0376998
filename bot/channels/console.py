"""The console channel: chat in a terminal through the same handler as every channel."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import TextIO

from bot.app import App
from bot.conversation.inbound import Inbound
from bot.conversation.texts import t

QUIT = ("/quit", "/exit", "/salir")


class ConsoleOutbox:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    async def send(self, key: str, texts: Sequence[str]) -> None:
        for text in texts:
            self.out.write(f"bot> {text}\n")
        self.out.flush()

    @contextlib.asynccontextmanager
    async def working(self, key: str) -> AsyncIterator[None]:
        yield


def _reader(
    loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None], src: TextIO
) -> None:
    """Blocking reads on a daemon thread, so Ctrl-C never waits for a line."""
    for line in src:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, None)


async def run_console(
    app: App,
    session: str,
    *,
    debug: bool = False,
    src: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """Read lines until end of input or /quit; each line is one message. Exit status 0."""
    src, out = src or sys.stdin, out or sys.stdout
    key, user = f"console:{session}", f"console:{session}"
    app.handler.register("console", ConsoleOutbox(out))
    lang = app.settings.language
    out.write(t(lang, "welcome_console", key=key, model=app.settings.chat_model) + "\n")
    if debug:
        await app.store.set_debug(key, True, datetime.now(UTC))
    await app.handler.recover()
    await app.handler.drain()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    threading.Thread(
        target=_reader, args=(asyncio.get_running_loop(), queue, src), daemon=True
    ).start()
    interactive = src.isatty()
    while True:
        if interactive:
            out.write("you> ")
            out.flush()
        line = await queue.get()
        if line is None or line.strip().lower() in QUIT:
            break
        if not line.strip():
            continue
        now = datetime.now(UTC)
        inbound = Inbound(key, line.rstrip("\n"), f"console-{now.timestamp():.6f}", now, user)
        await app.handler.handle(inbound)
    await app.folds.drain()
    return 0
