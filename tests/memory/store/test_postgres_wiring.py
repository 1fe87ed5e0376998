"""`VENTANA_DB` picks the backend: PostgreSQL URLs, SQLite paths, and a clear error for
anything else URL-like; doctor and the start-up warning on PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from bot.app import open_store
from config.settings import SettingsInvalid, load_settings
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore
from tests.support.postgres import start_server
from tests.support.processes.process import run_bot, user_env

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "url", ["postgresql://ventana:secret@db:5432/ventana", "postgres://db/ventana"]
)
def test_postgres_urls_are_kept_whole(url: str) -> None:
    """Both PostgreSQL schemes are accepted and kept as the URL (no path mangling)."""
    settings = load_settings(db=url)
    assert settings.postgres_url == url
    assert settings.db_pool_size == 16


@pytest.mark.parametrize("value", ["mysql://u:pw@h/db", "sqlite:///x.db", "redis://h"])
def test_other_urls_are_a_clear_error_naming_the_accepted_forms(value: str) -> None:
    """Any other URL-like value is refused, naming both accepted forms, password unseen."""
    with pytest.raises(SettingsInvalid) as caught:
        load_settings(db=value)
    message = str(caught.value)
    assert "VENTANA_DB" in message
    assert "postgresql://" in message
    assert "postgres://" in message
    assert "u:pw" not in message


def test_a_plain_path_stays_sqlite(tmp_path: Path) -> None:
    """A path is a SQLite file, as before; the pool size is validated."""
    settings = load_settings(db=str(tmp_path / "v.db"))
    assert settings.postgres_url is None
    assert settings.db == tmp_path / "v.db"
    with pytest.raises(SettingsInvalid, match="VENTANA_DB_POOL_SIZE"):
        load_settings(db_pool_size=0)


async def test_open_store_picks_the_backend_and_warns_about_polling(
    postgres_url: str, tmp_path: Path
) -> None:
    """A URL opens PostgreSQL with the configured pool; with Telegram polling the start
    warns that long polling has one consumer and points to webhook mode."""
    settings = load_settings(db=postgres_url, db_pool_size=3, telegram_bot_token="1:abc")
    with capture_logs() as logs:
        store = await open_store(settings)
    try:
        assert isinstance(store, PostgresStore)
        assert store.pool_state()["max"] == 3
    finally:
        await store.close()
    warned = [e for e in logs if e["event"] == "telegram_polling_single_consumer"]
    assert warned
    assert "TELEGRAM_WEBHOOK_URL" in warned[0]["hint"]
    sqlite = await open_store(load_settings(db=str(tmp_path / "x.db")))
    assert isinstance(sqlite, SQLiteStore)
    await sqlite.close()


def test_doctor_shows_backend_server_version_and_pool(postgres_url: str, tmp_path: Path) -> None:
    """`ventana doctor` on PostgreSQL names the backend, the server version and the pool."""
    env = user_env(VENTANA_DB=postgres_url, VENTANA_DB_POOL_SIZE="4")
    done = run_bot(["doctor"], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if "database" in x)
    assert line.startswith("ok")
    assert "postgresql 15" in line
    assert "/4 open" in line
    assert not (tmp_path / "postgresql:").exists()


def test_a_server_that_cannot_start_fails_the_run_never_skips(tmp_path: Path) -> None:
    """No PostgreSQL programs where they should be: the fixture fails, saying why."""
    with pytest.raises(pytest.fail.Exception, match="could not initdb"):
        next(start_server(bindir=tmp_path / "no-such-bin"))


def test_console_then_sessions_and_export_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    """A console chat stored on PostgreSQL is listed by `sessions`, exported by `export`
    and its recall index shown by `inspect`, with nothing written to a local file."""
    env = user_env(VENTANA_DB=postgres_url, VENTANA_LANGUAGE="en")

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return run_bot(list(args), env, tmp_path, stdin)

    chat = run("console", "--session", "pg", stdin="my order is #A-77\n")
    assert chat.returncode == 0, chat.stderr
    listed = run("sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "console:pg" in listed.stdout
    exported = run("export", "console:pg")
    assert exported.returncode == 0, exported.stderr
    assert "#A-77" in exported.stdout
    inspected = run("inspect", "console:pg", "--json")
    assert inspected.returncode == 0, inspected.stderr
    index = json.loads(inspected.stdout)["recall_index"]
    assert index["exchanges"] == 1
    assert index["bytes_all_keys"] > 0
    assert list(tmp_path.iterdir()) == []


async def test_ping_is_false_while_the_server_takes_no_writes(postgres_url: str) -> None:
    """`ping` (what /healthz asks) checks that transactions may write: a server switched
    to read-only (`default_transaction_read_only`, as on a replica) is not healthy."""
    store = await PostgresStore.open(postgres_url, pool_size=1)
    try:
        assert await store.ping()
        async with store.db.connection() as conn:
            await conn.execute("SET default_transaction_read_only = on")
        assert not await store.ping()
        async with store.db.connection() as conn:
            await conn.execute("SET default_transaction_read_only = off")
        assert await store.ping()
    finally:
        await store.close()


async def test_a_statement_is_prepared_at_its_first_run(postgres_url: str) -> None:
    """Statements are prepared at their first run (migrations, scripts of several
    statements, still apply): one intake on a one-connection pool leaves it prepared.
    One intake on a one-connection pool leaves the intake statement prepared there."""
    store = await PostgresStore.open(postgres_url, pool_size=1)  # migrations applied
    try:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        assert await store.inbox_add("telegram:5", "m1", "u", "text", "hola", at)
        async with store.db.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) AS n FROM pg_prepared_statements"
                " WHERE statement LIKE %s AND NOT from_sql",
                ("%ventana_intake(%",),
            )
            row = await cur.fetchone()
        assert row is not None
        assert row["n"] == 1
    finally:
        await store.close()
