"""The operator tools on a PostgreSQL database: its password never reaches their output."""

from __future__ import annotations

import pytest

from bot.cli.main import main
from tests.support.postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]  # fixtures

SECRET = "s3cret-pw"
pytestmark = pytest.mark.usefixtures("logging_restored")


def test_sessions_and_an_unknown_key_name_the_database_without_its_password(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sessions`, and `inspect`, `export`, `forget`, `usage` of an unknown key name the
    server and database only (the test server trusts any password)."""
    for name in ("VENTANA_CONFIG", "VENTANA_CHAT_MODEL", "VENTANA_SUMMARY_MODEL"):
        monkeypatch.delenv(name, raising=False)
    url = postgres_url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")
    assert SECRET in url
    monkeypatch.setenv("VENTANA_DB", url)
    assert main(["sessions"]) == 0
    for command in (["inspect"], ["export"], ["forget"], ["usage"]):
        assert main([*command, "console:nobody"]) == 1
    out = capsys.readouterr()
    assert "unknown session key 'console:nobody'" in out.err + out.out
    assert SECRET not in out.out + out.err
    assert "127.0.0.1/" in out.out + out.err
