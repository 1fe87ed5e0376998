"""The program as a terminal user meets it: readline line editing in the console, and the
warning at `run` start when a real channel would get the offline model."""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import time
from pathlib import Path

from tests.bot.cli.test_cli import _spawn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _read_until(fd: int, marker: bytes, seen: bytearray, deadline: float) -> None:
    while marker not in seen:
        assert time.monotonic() < deadline, f"no {marker!r} in {bytes(seen)!r}"
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                return


def test_terminal_input_has_line_editing(tmp_path: Path) -> None:
    """Ctrl-B moves the cursor back: "helo", Ctrl-B, "l" is received as "hello"."""
    main, child = pty.openpty()
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as err:
        args = ["console", "--session", "tty"]
        proc = _spawn(
            args, tmp_path, stdin=child, stdout=child, stderr=err, text=False, TERM="xterm"
        )
    os.close(child)
    seen = bytearray()
    try:
        deadline = time.monotonic() + 60
        _read_until(main, b"you> ", seen, deadline)
        os.write(main, b"helo\x02l\r")
        _read_until(main, "“hello”".encode(), seen, deadline)
        after = bytearray(seen[seen.index(b"bot>") :])
        _read_until(main, b"you> ", after, deadline)  # the next prompt comes after the reply
        os.write(main, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        os.close(main)
    assert "Traceback" not in errors.read_text("utf-8")


def test_run_without_a_channel_opens_the_console_on_a_terminal(tmp_path: Path) -> None:
    """`make run` on a terminal with no channel: the banner, then the console chat."""
    main, child = pty.openpty()
    proc = _spawn(["run"], tmp_path, stdin=child, stdout=child, stderr=child, text=False)
    os.close(child)
    seen = bytearray()
    try:
        deadline = time.monotonic() + 60
        _read_until(main, b"you> ", seen, deadline)
        os.write(main, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        os.close(main)
    assert b"ventana is running in the console" in seen
    assert b"no channel is configured" not in seen


def test_run_warns_when_telegram_gets_the_offline_model(tmp_path: Path) -> None:
    """`ventana run` with Telegram and no chat model logs a warning naming the fix."""
    proc = _spawn(
        ["run"],
        tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        TELEGRAM_BOT_TOKEN="1:x",
        TELEGRAM_BASE_URL="http://127.0.0.1:9/bot",  # nothing listens: no network
        VENTANA_HTTP_PORT=str(free_port()),
    )
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while not any("offline_chat_model" in line for line in lines):
            assert time.monotonic() < deadline, lines
            line = proc.stderr.readline()
            assert line, f"exited without the warning: {lines}"
            lines.append(line)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    warning = next(line for line in lines if "offline_chat_model" in line)
    assert "warn" in warning.lower()
    assert "VENTANA_CHAT_MODEL" in warning
