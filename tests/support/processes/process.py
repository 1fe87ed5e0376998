"""Start `python -m bot …` as a real child process with a clean, explicit environment."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

# Only what Python needs; every ventana setting is passed explicitly, and the working
# directory is the test's tmp dir, so no `.env` or shell variable can leak in.
_BASE_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


def bot_env(tmp: Path, **settings: str) -> dict[str, str]:
    return {**_BASE_ENV, "HOME": str(tmp), **settings}


def user_env(**settings: str) -> dict[str, str]:
    """This environment as a user's shell has it, minus every ventana, channel and
    provider variable, plus `settings`."""
    ours = ("VENTANA_", "TELEGRAM_", "WHATSAPP_", "ANTHROPIC_", "OPENAI_")
    return {k: v for k, v in os.environ.items() if not k.startswith(ours)} | settings


def run_bot(
    args: list[str], env: Mapping[str, str], cwd: Path, stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` run to its end in `cwd` with exactly `env`, text in and out."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def spawn(
    args: list[str],
    env: Mapping[str, str],
    cwd: Path,
    stderr: Path,
    *,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    with stderr.open("ab") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", *args],
            env=dict(env),
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=err,
        )


def sigkill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


@contextlib.contextmanager
def reaped(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """Whatever happens in the block, the process is gone after it."""
    try:
        yield proc
    finally:
        sigkill(proc)


def tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])
