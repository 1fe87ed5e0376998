"""The program as users run it: subprocesses of `python -m bot`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes.process import run_bot, user_env

ROOT = Path(__file__).resolve().parents[3]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return user_env(**{"VENTANA_DB": str(tmp_path / "cli.db"), "VENTANA_LANGUAGE": "en", **extra})


def _spawn(
    args: list[str],
    tmp_path: Path,
    *,
    stdin: Any,
    stdout: Any,
    stderr: Any,
    text: bool = True,
    **extra: str,
) -> subprocess.Popen[Any]:
    """`python -m bot ARGS` started in `tmp_path` with the clean environment."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        text=text,
        env=_env(tmp_path, **extra),
        cwd=tmp_path,
    )


def _run(
    args: list[str], tmp_path: Path, stdin: str = "", **extra: str
) -> subprocess.CompletedProcess[str]:
    return run_bot(args, _env(tmp_path, **extra), tmp_path, stdin)


def test_console_piped_input_then_end_of_input(tmp_path: Path) -> None:
    """Piped lines are answered by the offline model; end of input exits 0, no traceback."""
    done = _run(["console", "--session", "ana"], tmp_path, "hello there\nsecond line\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("bot> [offline mode]") == 2
    assert "Traceback" not in done.stderr


def test_conversation_persists_across_runs(tmp_path: Path) -> None:
    """A second run of the same session sees the first run's exchanges."""
    _run(["console", "--session", "ana"], tmp_path, "my order is #A-5521\n")
    again = _run(["console", "--session", "ana"], tmp_path, "what was my order?\n")
    assert "2 earlier messages" in again.stdout
    sessions = _run(["sessions", "--json"], tmp_path)
    assert "console:ana" in sessions.stdout


def test_invalid_settings_named_together_exit_2(tmp_path: Path) -> None:
    """Bad variables stop the program with status 2, each one named."""
    done = _run(["console"], tmp_path, VENTANA_FOLD_BATCH="zero", VENTANA_LANGUAGE="fr")
    assert done.returncode == 2
    assert "VENTANA_FOLD_BATCH" in done.stderr
    assert "VENTANA_LANGUAGE" in done.stderr


def test_missing_provider_key_is_named(tmp_path: Path) -> None:
    """A provider without its key is a clear error naming the variable."""
    done = _run(["console"], tmp_path, VENTANA_CHAT_MODEL="anthropic:claude-sonnet-4-6")
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_doctor_reports_database_and_models(tmp_path: Path) -> None:
    """doctor checks settings, database and model specs; --live probes the offline models."""
    (tmp_path / "cli.db").touch()  # new and empty: doctor opens and migrates it
    done = _run(["doctor", "--live"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "database" in done.stdout
    assert "synchronous=normal" in done.stdout
    assert "chat live" in done.stdout


def test_doctor_shows_the_durability_the_database_runs_with(tmp_path: Path) -> None:
    """`VENTANA_DB_SYNC=full` reaches the connection: doctor reads it back from SQLite."""
    (tmp_path / "cli.db").touch()
    done = _run(["doctor"], tmp_path, VENTANA_DB_SYNC="full")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "synchronous=full" in done.stdout
    bad = _run(["doctor"], tmp_path, VENTANA_DB_SYNC="off")
    assert bad.returncode == 2
    assert "VENTANA_DB_SYNC" in bad.stdout + bad.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGTERM or Ctrl-C while waiting for input: exit without a traceback, DB closed."""
    pipe = subprocess.PIPE
    proc = _spawn(["console"], tmp_path, stdin=pipe, stdout=pipe, stderr=pipe)
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while "bot>" not in proc.stdout.readline():
            assert time.monotonic() < deadline
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err
    assert not (tmp_path / "cli.db-wal").exists() or (tmp_path / "cli.db-wal").stat().st_size == 0


def test_console_keeps_info_logs_out_of_the_chat(tmp_path: Path) -> None:
    """In the console, per-turn info lines stay hidden unless VENTANA_LOG_LEVEL says so."""
    quiet = _run(["console"], tmp_path, "hello\n")
    assert '"turn"' not in quiet.stderr
    assert " turn " not in quiet.stderr
    loud = _run(["console"], tmp_path, "hello again\n", VENTANA_LOG_LEVEL="info")
    assert "turn" in loud.stderr


@pytest.mark.parametrize("command", [["run"], ["console"], ["sessions"]])
def test_a_corrupt_database_exits_1_with_a_clear_message(
    tmp_path: Path, command: list[str]
) -> None:
    """A VENTANA_DB that is not a database: status 1, one line naming the file, no
    traceback, and the process does not linger (`run_bot` has a deadline)."""
    bad = tmp_path / "cli.db"
    bad.write_bytes(b"not a database, just bytes " * 1000)
    # `run` needs a channel when its input is not a terminal; nothing listens there
    telegram = {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_BASE_URL": "http://127.0.0.1:9/bot"}
    done = _run(command, tmp_path, VENTANA_HTTP_PORT="18931", **telegram)
    assert done.returncode == 1, done.stderr
    assert f"cannot open the database {bad}" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_without_a_channel_or_a_terminal_is_a_configuration_error(tmp_path: Path) -> None:
    """`run` with no channel and input that is not a terminal (a supervisor, a pipe) exits
    2 naming the variables of each channel, instead of a console that ends at once."""
    done = _run(["run"], tmp_path, "hello\n")
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("ventana: no channel is configured")
    for variable in ("TELEGRAM_BOT_TOKEN", "WHATSAPP_ACCESS_TOKEN", "WHATSAPP_VERIFY_TOKEN"):
        assert variable in line
    assert "needs a terminal" in line
    assert "`ventana console`" in line
    assert done.stdout == ""  # no banner, no console
    assert not (tmp_path / "cli.db").exists()


def test_a_reader_that_leaves_early_ends_the_program_quietly(tmp_path: Path) -> None:
    """`ventana console < lines | head -1`: the closed pipe ends it with 141, no traceback."""
    child = _spawn(["console"], tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)  # fmt: skip
    child.stdout.close()  # the reader is gone before anything was written
    _, err = child.communicate("hello\n" * 20, timeout=60)
    assert child.returncode == 141, err
    assert "Traceback" not in err
    assert "Exception ignored" not in err
