"""The console channel in process: `--debug` lasts one run, the start says when debug is
on, and text is shown to the terminal, never obeyed by it."""

from __future__ import annotations

import asyncio
import io
import threading
from pathlib import Path
from typing import Any

from bot.app import App
from bot.channels.console import run_console
from config.settings import load_settings
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel

KEY = "console:ana"
DRY_RUN = "DEBUG MODE — the model was not called"


class HeldInput(io.StringIO):
    """Lines that are read at once, then an input that stays open until `release`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.release = threading.Event()
        self.reader: threading.Thread | None = None

    def __next__(self) -> str:  # type: ignore[override]  # typeshed: _IOBase gives bytes
        self.reader = threading.current_thread()
        if line := self.readline():
            return line
        self.release.wait(timeout=30)
        raise StopIteration


async def _app(db: Path, model: ScriptedChatModel | None = None) -> App:
    settings = load_settings(language="en")
    chat = model or ScriptedChatModel()
    return await App.build(settings, db=db, chat_model=chat, summary_model=OfflineChatModel())


async def _console(db: Path, lines: str, model: ScriptedChatModel | None = None, **kw: Any) -> str:
    """One console run on `db` with its own App, as a new process would; what it printed."""
    app, out = await _app(db, model), io.StringIO()
    try:
        await run_console(app.handler, app.settings, "ana", src=io.StringIO(lines), out=out, **kw)
    finally:
        await app.aclose()
    return out.getvalue()


async def test_debug_flag_lasts_one_run(tmp_path: Path) -> None:
    """`--debug` is a dry run for that run only: the next run without it calls the model."""
    first = await _console(tmp_path / "c.db", "hello\n", debug=True)
    model = ScriptedChatModel()
    second = await _console(tmp_path / "c.db", "hello\n", model)
    assert DRY_RUN in first
    assert DRY_RUN not in second
    assert len(model.chat_calls) == 1
    assert "Debug mode is on for this run only" in first
    assert "Debug mode is on" not in second


async def test_debug_flag_is_switched_off_when_the_run_is_interrupted(tmp_path: Path) -> None:
    """Ctrl-C (the task cancelled) in a `--debug` run switches debug off all the same."""
    app, src, out = await _app(tmp_path / "c.db"), HeldInput("hello\n"), io.StringIO()
    try:
        run = run_console(app.handler, app.settings, "ana", debug=True, src=src, out=out)
        task = asyncio.create_task(run)
        async with asyncio.timeout(30):
            while DRY_RUN not in out.getvalue():  # noqa: ASYNC110 - the console writes it
                await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
        state = await app.store.peek_state(KEY, app.settings.window_exchanges)
        assert state is not None
        assert not state.debug_for(KEY)
    finally:
        src.release.set()
        if src.reader is not None:
            src.reader.join(timeout=30)
        await app.aclose()


async def test_start_says_debug_is_on_and_how_to_switch_it_off(tmp_path: Path) -> None:
    """A `/debug on` of an earlier run stays on; the next start says so and names /debug off."""
    await _console(tmp_path / "c.db", "/debug on\n")
    kept = await _console(tmp_path / "c.db", "")
    assert "Debug mode is on (left on by an earlier /debug on)" in kept
    assert "/debug off switches it off" in kept
    await _console(tmp_path / "c.db", "/debug off\n")
    assert "Debug mode is on" not in await _console(tmp_path / "c.db", "")


async def test_console_shows_control_characters_instead_of_obeying_them(tmp_path: Path) -> None:
    """An ESC from the user and a C1 CSI or BEL from the model reach the terminal escaped."""
    model = ScriptedChatModel(script=["done \x9b2J\x07"])
    out = await _console(tmp_path / "c.db", "a \x1b[31mred\x1b[0m b\n/debug on\nx\x1b[2J\n", model)
    assert not {"\x1b", "\x9b", "\x07"} & set(out)
    assert "bot> done \\x9b2J\\x07" in out
    assert "x\\x1b[2J" in out  # the debug view echoes the message
