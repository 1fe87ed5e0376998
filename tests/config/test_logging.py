"""Logging: phone-number keys are pseudonymized above debug, raw only at debug."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from config.logging import configure_logging, pseudonym, pseudonym_secret
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import LUCIA, FakeGraph, clear_env, golden
from tests.support.whatsapp_rig import WhatsAppRig

PHONE = LUCIA.split(":", 1)[1]
SECRET = b"per-install-secret"


@pytest.fixture(autouse=True)
def _reset_structlog(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clear_env(monkeypatch, tmp_path)
    yield
    structlog.reset_defaults()


def events(err: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


async def whatsapp_turn(db: Path) -> None:
    graph = FakeGraph()
    rig = await WhatsAppRig.open(db, graph, ScriptedChatModel(reply=respuesta))
    try:
        assert (await rig.post(golden("text.json"))).status_code == 200
        await rig.settle()
        assert graph.texts_to(LUCIA)  # the turn really ran and replied
    finally:
        await rig.aclose()


async def test_info_logs_of_a_whatsapp_turn_never_show_the_phone_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At info, every event of a real turn names the chat by its pseudonym, never the phone."""
    configure_logging("json", "info", SECRET)
    await whatsapp_turn(tmp_path / "v.db")
    err = capsys.readouterr().err
    assert PHONE not in err
    keyed = [e for e in events(err) if "key" in e]
    assert any(e["event"] == "turn" for e in keyed)
    assert {e["key"] for e in keyed} == {pseudonym(SECRET, LUCIA)}


async def test_debug_logs_show_the_raw_key_next_to_its_pseudonym(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At debug the raw key is logged, with the pseudonym alongside to correlate."""
    configure_logging("json", "debug", SECRET)
    structlog.get_logger("t").debug("probe", key=LUCIA)
    structlog.get_logger("t").info("probe", key=LUCIA)
    debug, info = events(capsys.readouterr().err)
    assert (debug["key"], debug["key_pseudonym"]) == (LUCIA, pseudonym(SECRET, LUCIA))
    assert info["key"] == pseudonym(SECRET, LUCIA)


def test_pseudonyms_are_stable_keyed_and_short() -> None:
    """Same key and secret → same pseudonym; another secret or key → another one."""
    first = pseudonym(SECRET, LUCIA)
    assert first == pseudonym(SECRET, LUCIA)
    assert first.startswith("whatsapp:~")
    assert len(first) == len("whatsapp:~") + 12
    assert first != pseudonym(b"other", LUCIA)
    assert first != pseudonym(SECRET, "whatsapp:34600111222")


def test_the_secret_is_the_setting_else_derived_from_the_app_secret() -> None:
    """An explicit secret wins; the app secret gives a stable derived key; none: random."""
    assert pseudonym_secret("explicit", "app") == b"explicit"
    derived = pseudonym_secret(None, "app")
    assert derived == pseudonym_secret(None, "app")
    assert derived != b"app"
    assert pseudonym_secret(None) != pseudonym_secret(None)


def test_other_channels_keep_their_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """Telegram chat ids and console names are not phone numbers: logged as they are."""
    configure_logging("json", "info", SECRET)
    structlog.get_logger("t").info("probe", key="telegram:77", user="console:ana")
    (event,) = events(capsys.readouterr().err)
    assert (event["key"], event["user"]) == ("telegram:77", "console:ana")


def test_error_fields_are_redacted_at_every_level(capsys: pytest.CaptureFixture[str]) -> None:
    """The last line of defence: keys in error/detail/exception fields never print."""
    configure_logging("json", "debug", SECRET)
    log = structlog.get_logger("t")
    log.warning("call_failed", error="HTTPError('bad key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQr')")
    log.debug("retry", detail="fw_3ZkQv8s1Gq2Lr7TnYb5Wc refused")
    try:
        raise ValueError("token 0123456789abcdef0123456789abcdef")
    except ValueError:
        log.exception("crashed")
    err = capsys.readouterr().err
    assert "AIzaSy" not in err
    assert "fw_3Zk" not in err
    assert "0123456789abcdef0123" not in err
    assert "test_error_fields_are_redacted_at_every_level" in err  # names stay readable


def test_console_tracebacks_show_no_locals_and_no_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """The console format (the default) prints a plain traceback: no local variables (a
    message body, a token), and keys in the exception's message redacted as in JSON."""
    configure_logging("console", "info", SECRET)

    body = " ".join(("el", "cuerpo", "del", "mensaje"))  # never on a line a traceback quotes

    def turn(text: str) -> None:
        token = "-".join(("sk", "proj", "abcdef1234567890"))
        raise ValueError(f"refused {token}" if text else "empty")

    try:
        turn(body)
    except ValueError:
        structlog.get_logger("t").exception("turn_failed")
    err = capsys.readouterr().err
    assert "el cuerpo del mensaje" not in err
    assert "sk-proj" not in err
    assert "ValueError: refused" in err
    assert "in turn" in err  # where it broke stays readable


def test_library_log_lines_are_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    """uvicorn's and psycopg's own stdlib lines go through structlog's formatter: JSON logs
    stay one JSON object a line, with level, time and logger, keys still redacted."""
    import logging

    configure_logging("json", "info", SECRET)
    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
    logging.getLogger("psycopg.pool").error("error connecting: password sk-proj-abcdef1234567890")
    try:
        raise OSError("connection refused")
    except OSError:
        logging.getLogger("psycopg").exception("connection lost")
    logging.getLogger("uvicorn.error").info("below warning: libraries stay quiet")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]  # every line is JSON
    assert [(e["logger"], e["level"]) for e in parsed] == [
        ("uvicorn.error", "warning"),
        ("psycopg.pool", "error"),
        ("psycopg", "error"),
    ]
    assert all("timestamp" in e for e in parsed)
    assert parsed[0]["event"] == "Invalid HTTP request received."
    assert "sk-proj" not in lines[1]
    assert "OSError: connection refused" in parsed[2]["exception"]


def test_a_log_stream_that_fails_loses_the_line_not_the_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """stderr closed or its reader gone (EPIPE): a log call returns, the line is lost."""

    class Broken(io.StringIO):
        def write(self, _: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    for stream in (Broken(), io.StringIO()):
        monkeypatch.setattr(sys, "stderr", stream)
        configure_logging("json", "info")
        if not isinstance(stream, Broken):
            stream.close()  # closed after logging was set up on it
        structlog.get_logger("test").warning("store_failed", attempt=1)
