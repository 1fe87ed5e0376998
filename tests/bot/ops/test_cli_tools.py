"""`ventana inspect`, `sessions`, `export` and `replay` from the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import App
from bot.cli.main import main
from tests.bot.ops.conftest import (
    conversation,
    make_settings,
    recording_model,
    write_transcript,
)
from tests.support.inbound import inbound as make_inbound

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT.parent / "shared" / "contract" / "check_replay_contract.py"
KEY = "telegram:42"


async def _populate(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    app = await App.build(settings, chat_model=recording_model())
    try:
        for n in range(1, 8):
            text = f"Pedido #PED-{n}00 por {n}5,00 €" if n != 5 else "/reset"
            await app.handler.handle(make_inbound(KEY, text, f"u{n}"))
            await app.folds.drain()
    finally:
        await app.aclose()


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    asyncio.run(_populate(tmp_path))
    for name, value in {
        "VENTANA_DB": str(tmp_path / "ventana.db"),
        "VENTANA_WINDOW_EXCHANGES": "2",
        "VENTANA_FOLD_BATCH": "2",
        "VENTANA_LOG_LEVEL": "warning",
    }.items():
        monkeypatch.setenv(name, value)
    return tmp_path / "ventana.db"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_inspect_json_shape(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """inspect --json lists episodes (how each began), summaries, window, noise and tokens."""
    data = run_json(capsys, "inspect", KEY, "--json")
    assert set(data) == {
        "format", "key", "session", "episodes", "current", "noise", "tokens", "recall_index",
        "resets_reverted",
    }  # fmt: skip
    assert data["recall_index"]["exchanges"] >= 1
    assert data["recall_index"]["bytes_all_keys"] > 0
    episodes = data["episodes"]
    assert isinstance(episodes, list)
    assert len(episodes) == 2
    assert [e["began"] for e in episodes] == ["first", "manual"]
    versions = episodes[0]["summaries"]
    assert versions
    assert set(versions[0]) >= {
        "version",
        "checkpoint",
        "prompt_version",
        "model",
        "source_from",
        "source_to",
        "input_tokens",
        "output_tokens",
        "round",
    }
    current = data["current"]
    assert isinstance(current, dict)
    assert len(current["window"]) == 2
    assert set(current["window"][0]) == {"id", "user", "assistant", "created_at"}
    assert current["carry_over"] == []  # a manual reset carries nothing
    assert current["carry_over_block"] is None
    assert current["previous_case"] is None  # nor keeps the case it closed
    assert data["resets_reverted"] == []
    assert all(e["carry_over"] == [] for e in episodes)
    tokens = data["tokens"]
    assert isinstance(tokens, dict)
    assert tokens["budget"] == 8000
    assert set(tokens["next_request_without_message"]) == {
        "system",
        "summary",
        "carry_over",
        "pending",
        "window",
        "total",
    }


def test_inspect_renders_tables(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json, inspect draws readable tables."""
    assert main(["inspect", KEY]) == 0
    out = capsys.readouterr().out
    for title in ("episodes", "summary versions", "window", "tokens"):
        assert title in out


def test_sessions_json_shape(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sessions --json gives each key with activity, counts and summary versions."""
    data = run_json(capsys, "sessions", "--json")
    rows = data["sessions"]
    assert isinstance(rows, list)
    assert [r["key"] for r in rows] == [KEY]
    assert set(rows[0]) == {
        "key",
        "created_at",
        "last_activity",
        "exchanges",
        "noise",
        "episodes",
        "summary_versions",
        "debug",
    }
    assert rows[0]["exchanges"] == 6
    assert rows[0]["episodes"] == 2


def test_export_has_every_row(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """export prints every stored row of the key as JSON."""
    data = run_json(capsys, "export", KEY)
    assert {"session", "episodes", "exchanges", "summaries", "inbox"} <= set(data)
    exchanges = data["exchanges"]
    assert isinstance(exchanges, list)
    assert len(exchanges) == 6
    assert isinstance(data["inbox"], list)
    assert len(data["inbox"]) == 7


@pytest.mark.parametrize("argv", [["inspect", "telegram:404"], ["export", "telegram:404"]])
def test_unknown_key_is_a_clear_error(
    db: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """An unknown key exits 1 and says so."""
    assert main(argv) == 1
    assert "unknown session key 'telegram:404'" in capsys.readouterr().err


def test_missing_database_is_not_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read-only tools never create a database."""
    monkeypatch.setenv("VENTANA_DB", str(tmp_path / "none.db"))
    assert main(["inspect", KEY]) == 1
    assert not (tmp_path / "none.db").exists()


def test_replay_command_writes_report_contexts_and_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """replay writes the report, one context line per user turn and the chart, and leaves
    VENTANA_DB alone."""
    monkeypatch.setenv("VENTANA_DB", str(tmp_path / "user.db"))
    monkeypatch.setenv("VENTANA_LOG_LEVEL", "warning")
    transcript = write_transcript(tmp_path / "t.jsonl", conversation("s", "X", 6, scripted=True))
    out, ctx, chart = tmp_path / "r.json", tmp_path / "c.jsonl", tmp_path / "chart.html"
    argv = [
        "replay",
        str(transcript),
        "--window",
        "2",
        "--fold-batch",
        "2",
        "--topic",
        "off",
        "--out",
        str(out),
        "--contexts",
        str(ctx),
        "--chart",
        str(chart),
    ]
    assert main(argv) == 0
    report = json.loads(out.read_text("utf-8"))
    assert len(report["turns"]) == 6
    assert report["settings"]["topic_detection"] == "off"
    assert len(ctx.read_text("utf-8").splitlines()) == 6
    assert "<svg" in chart.read_text("utf-8")
    assert "ratio" in capsys.readouterr().out
    assert not (tmp_path / "user.db").exists()


@pytest.mark.usefixtures("logging_restored")
def test_replay_rejects_a_bad_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Flag values are validated like the settings they override, and blamed on the flag
    (`--window`), not on VENTANA_WINDOW_EXCHANGES, which the user never set."""
    transcript = write_transcript(tmp_path / "t.jsonl", conversation("s", "X", 1, scripted=True))
    assert main(["replay", str(transcript), "--window", "0", "--fold-batch", "2"]) == 2
    err = capsys.readouterr().err
    assert "--window: Input should be greater than or equal to 1 (got '0')" in err
    assert "VENTANA_WINDOW_EXCHANGES" not in err
    assert "--fold-batch" not in err


@pytest.mark.skipif(not CONTRACT.is_file(), reason="the shared contract checker is not here")
def test_replay_contract_checker_passes() -> None:
    """The shared contract checker accepts `ventana replay`."""
    ventana = Path(sys.executable).parent / "ventana"
    done = subprocess.run(
        [sys.executable, str(CONTRACT), str(ventana)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
