"""The small things of issue 21 from the command line: --version, markup-safe, escaped
and uncut inspect/sessions, replay outputs checked first, forget of an unknown key, doctor's
warnings, the honest empty /summary, typo'd variables."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import App
from bot.cli.main import main
from bot.ops.inspect_view import DIGEST_CHARS, signal_digest
from config.settings import Settings, load_settings
from tests.bot.cli.test_cli import _env, _run
from tests.support.inbound import inbound as make_inbound

LONG_KEY = "console:" + "a-very-long-session-name-" * 5 + "end"


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logging_restored: None) -> None:
    """A clean environment on a database of our own; logging restored afterwards."""
    for info in Settings.model_fields.values():
        for name in getattr(info.validation_alias, "choices", []):
            monkeypatch.delenv(str(name), raising=False)
    monkeypatch.delenv("VENTANA_CONFIG", raising=False)
    monkeypatch.setenv("VENTANA_DB", str(tmp_path / "polish.db"))
    monkeypatch.setenv("VENTANA_LANGUAGE", "en")
    monkeypatch.chdir(tmp_path)


async def _say(key: str, *texts: str) -> None:
    app = await App.build(load_settings())
    try:
        for n, text in enumerate(texts):
            await app.handler.handle(make_inbound(key, text, f"{key}-{n}"))
        await app.folds.drain()
    finally:
        await app.aclose()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`ventana --version` prints the installed version and exits 0."""
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == "ventana 0.1.0"


def test_inspect_shows_markup_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    """User text with `[/]` and `[bracketed]` words is shown as written, never parsed."""
    asyncio.run(_say("console:rich", "close [/] this and keep [bracketed] and [b]bold[/b] words"))
    assert _main("inspect", "console:rich") == 0
    out = capsys.readouterr().out
    assert "close [/] this" in out
    assert "keep [bracketed] and [b]bold[/b]" in out


def test_inspect_shows_control_characters_and_export_keeps_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """inspect shows an ESC of the user's text as `\\x1b`, never sends it to the terminal;
    export's JSON escapes it too (and a C1 CSI, an override) yet decodes to the text."""
    text = "a \x1b[31mred\x1b[0m b \x9b2J \u202eexe"
    asyncio.run(_say("console:esc", text))
    assert _main("inspect", "console:esc") == 0
    out = capsys.readouterr().out
    assert not {"\x1b", "\x9b", "\u202e"} & set(out)
    assert "a \\x1b[31mred\\x1b[0m b \\x9b2J \\u202eexe" in out
    assert _main("export", "console:esc") == 0
    exported = capsys.readouterr().out
    assert not {"\x1b", "\x9b", "\u202e"} & set(exported)
    [exchange] = json.loads(exported)["exchanges"]
    assert exchange["user_text"] == text


def test_the_episodes_table_shows_a_digest_of_a_reset_s_signals() -> None:
    """A learned reset reads as its probability, bar and pushing features; a rule's as
    the readings that were set; never the whole JSON, which `--json` keeps."""
    learned = {"p": 0.8645, "threshold": 0.45, "novelty": 0.9, "novel_terms": ["hide"] * 40,
               "top_features": [["opening", 1.2], ["gap_novel", 0.4]]}  # fmt: skip
    assert signal_digest(learned) == "p 0.8645 (bar 0.45), opening, gap_novel"
    rules = {"closure_cues_message": ["that's all"], "returned": False, "intent_changed": True}
    assert signal_digest(rules) == "closure_cues_message, intent_changed"
    assert len(signal_digest({f"cue_{n}": True for n in range(60)})) == DIGEST_CHARS


def test_sessions_and_inspect_keep_long_keys_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Piped output is not cut at 80 columns: a 130-character key appears whole."""
    asyncio.run(_say(LONG_KEY, "hello"))
    assert _main("sessions") == 0
    assert LONG_KEY in capsys.readouterr().out
    assert _main("inspect", LONG_KEY) == 0
    assert LONG_KEY in capsys.readouterr().out


def test_forget_unknown_key_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """`forget typo:1` is an error naming the key; a real key is erased with status 0."""
    asyncio.run(_say("console:real", "hello"))
    assert _main("forget", "typo:1") == 1
    assert "unknown session key 'typo:1'" in capsys.readouterr().err
    assert _main("forget", "console:real") == 0
    assert "erased console:real" in capsys.readouterr().out
    assert _main("forget", "console:real") == 1


def test_resummarize_says_the_real_cause(capsys: pytest.CaptureFixture[str]) -> None:
    """`resummarize` of a chat whose exchanges all fit in the window says nothing is
    pending (not "or the summary model failed"); an unknown key is named as such."""
    asyncio.run(_say("console:tiny", "hello"))
    assert _main("resummarize", "console:tiny") == 1
    err = capsys.readouterr().err
    assert "nothing to summarize: every exchange is still in the window" in err
    assert "model failed" not in err
    assert _main("resummarize", "typo:9") == 1
    assert "unknown session key" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["resummarize", "forget"])
def test_a_mistyped_database_is_refused_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`resummarize` and `forget` on a VENTANA_DB that does not exist say the key is
    unknown there (exit 1) and create no database, as `inspect` does."""
    assert _main(command, "console:x") == 1
    assert "unknown session key 'console:x' in " in capsys.readouterr().err
    assert not (tmp_path / "polish.db").exists()


def test_doctor_reports_a_missing_database_without_creating_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A VENTANA_DB file not there yet: doctor says so, naming a missing folder (a typo
    shows), and creates nothing; still exit 0 (a fresh install). Where no folder can be
    made for it (a file in the way), it fails."""
    typo = tmp_path / "dtaa" / "bot.db"
    monkeypatch.setenv("VENTANA_DB", str(typo))
    assert _main("doctor") == 0
    out = capsys.readouterr().out
    assert f"ok   database       sqlite {typo}: not found, nor its folder {typo.parent}" in out
    assert "(it will be created on first run)" in out
    assert not typo.parent.exists()
    monkeypatch.setenv("VENTANA_DB", str(tmp_path / "polish.db"))
    assert _main("doctor") == 0
    assert "polish.db: not found (it will be created on first run)" in capsys.readouterr().out
    assert not (tmp_path / "polish.db").exists()
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("VENTANA_DB", str(tmp_path / "file" / "bot.db"))
    assert _main("doctor") == 1
    assert f"FAIL  database       sqlite {tmp_path / 'file' / 'bot.db'}: not found" in (
        capsys.readouterr().out
    )


def test_operator_tools_print_their_own_output_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """doctor on a new database and resummarize log no info line (migration_applied,
    fold_written, stopped) unless VENTANA_LOG_LEVEL asks; warnings still show."""
    monkeypatch.setenv("VENTANA_WINDOW_EXCHANGES", "2")
    monkeypatch.setenv("VENTANA_FOLD_BATHC", "2")  # a typo: its warning must stay
    (tmp_path / "polish.db").touch()  # new and empty: doctor migrates it
    assert _main("doctor") == 0
    doctor = capsys.readouterr()
    assert "ok   database" in doctor.out
    assert "migration_applied" not in doctor.err
    assert "unknown_setting" in doctor.err
    asyncio.run(_say("console:long", *(f"message {n}" for n in range(5))))
    capsys.readouterr()
    assert _main("resummarize", "console:long") == 0
    err = capsys.readouterr().err
    assert "unknown_setting" in err
    assert "fold_written" not in err
    assert "stopped" not in err
    monkeypatch.setenv("VENTANA_LOG_LEVEL", "info")
    assert _main("resummarize", "console:long") == 0
    assert "fold_written" in capsys.readouterr().err


def test_forget_with_a_reader_holding_on_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a reader on an old snapshot, `forget` exits 0 saying the rows are deleted and
    the last copies go when the reader closes, after a bounded wait; never "erased"."""
    asyncio.run(_say("console:held", "hello HELD-MARK"))
    reader = sqlite3.connect(tmp_path / "polish.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM exchanges").fetchall()
    try:
        assert _main("forget", "console:held", "--wait", "0.3") == 0
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    out = capsys.readouterr().out
    assert "deleted console:held" in out
    assert "the last copies will be wiped when the reader closes" in out
    assert "erased" not in out


@pytest.mark.parametrize("flag", ["--out", "--contexts", "--chart"])
def test_replay_into_a_missing_folder_fails_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """An output into a folder that does not exist is refused before the replay: exit 2."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": "hola"}) + "\n", "utf-8")
    name = "chart.html" if flag == "--chart" else "x.json"
    code = _main("replay", str(transcript), flag, str(tmp_path / "missing" / name))
    captured = capsys.readouterr()
    assert code == 2
    assert f"{flag} " in captured.err
    assert "does not exist" in captured.err
    assert "replay of" not in captured.out  # nothing ran


def test_a_transcript_not_in_utf8_is_a_transcript_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Latin-1 transcript names its file and line and exits 1, as any bad transcript
    (it exited 2 as a settings error, with a bare codec message); a UTF-8 byte-order mark
    is read through."""
    line = json.dumps({"role": "user", "content": "hola"}) + "\n"
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(line.encode() + '{"role": "user", "content": "año"}\n'.encode("latin-1"))
    assert _main("replay", str(latin)) == 1
    assert f"ventana: {latin}: line 2: not UTF-8 text" in capsys.readouterr().err
    marked = tmp_path / "bom.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + line.encode())
    assert _main("replay", str(marked)) == 0
    assert "replay of bom.jsonl" in capsys.readouterr().out


def test_replay_writes_a_png_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--chart x.png` works with the dev install (matplotlib from the chart extra)."""
    transcript = tmp_path / "t.jsonl"
    lines = [{"role": "user", "content": f"mensaje {n} del pedido #{n}"} for n in range(12)]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    assert _main("replay", str(transcript), "--chart", str(tmp_path / "x.png")) == 0
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "chart:" in capsys.readouterr().out


def test_doctor_flags_the_offline_model_behind_telegram(tmp_path: Path) -> None:
    """doctor prints a WARN line when Telegram would be answered by the offline model."""
    done = _run(["doctor"], tmp_path, TELEGRAM_BOT_TOKEN="1:x", VENTANA_WINDOW_EXCHANGE="3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARN  chat model" in done.stdout
    assert "offline model" in done.stdout
    assert "VENTANA_WINDOW_EXCHANGE is not a ventana setting" in done.stdout
    assert "did you mean VENTANA_WINDOW_EXCHANGES?" in done.stdout


def test_unknown_variable_is_a_warning_naming_the_closest(tmp_path: Path) -> None:
    """A typo'd VENTANA_* variable is logged at warning level with the closest name."""
    done = _run(["console"], tmp_path, "/summary\n", VENTANA_FOLD_BATHC="2")
    assert done.returncode == 0, done.stderr
    assert "unknown_setting" in done.stderr
    assert "VENTANA_FOLD_BATHC" in done.stderr
    assert "VENTANA_FOLD_BATCH" in done.stderr.replace("VENTANA_FOLD_BATHC", "")
    assert "warn" in done.stderr.lower()


def test_summary_on_an_empty_conversation_is_honest(tmp_path: Path) -> None:
    """/summary before anything was said says there is nothing yet, not "the last 6"."""
    done = _run(["console", "--session", "new"], tmp_path, "/summary\nhello\n/summary\n")
    assert done.returncode == 0, done.stderr
    assert "nothing to remember so far" in done.stdout
    assert "the last 6" not in done.stdout
    assert "(exchanges: 1)" in done.stdout


def test_settings_error_echoes_the_value(tmp_path: Path) -> None:
    """A bad value is shown in the error; JSON is accepted for VENTANA_LOG_FORMAT."""
    done = _run(["doctor"], tmp_path, VENTANA_WINDOW_EXCHANGES="six")
    assert done.returncode == 2
    assert "(got 'six')" in done.stderr
    ok = _run(["doctor"], tmp_path, VENTANA_LOG_FORMAT="JSON")
    assert ok.returncode == 0, ok.stderr


def _main(*argv: str) -> int:
    return main(list(argv))


def test_png_without_matplotlib_fails_first_with_the_fix(tmp_path: Path) -> None:
    """With only `make run`'s install (no matplotlib), --chart x.png exits 2 before replaying
    and says how to get PNG support."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": "hola"}) + "\n", "utf-8")
    # sys.modules[name] = None makes `import matplotlib` raise ImportError, as if not installed
    code = (
        "import sys; sys.modules['matplotlib'] = None; from bot.cli.main import main; "
        f"sys.exit(main(['replay', {str(transcript)!r}, '--chart', 'x.png']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install -e '.[chart]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert "replay of" not in done.stdout
    assert not (tmp_path / "x.png").exists()
