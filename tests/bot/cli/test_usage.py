"""`ventana usage`: provider-reported tokens per key and model, with an honest cost."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bot.cli.main import build_parser
from bot.cli.usage import render
from bot.conversation.usage_view import build_report
from config.settings import load_settings
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from memory.store.usage import UsageTotal
from providers.base import Usage
from tests.support.postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]  # fixtures
pytestmark = pytest.mark.usefixtures("logging_restored")  # `main` runs in-process

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
T1 = datetime(2026, 3, 5, 12, tzinfo=UTC)


async def _seed(db: Path) -> None:
    store = await SQLiteStore.open(db)
    rows = [
        ("telegram:1", T0, "anthropic:claude-sonnet-4-6", Usage(1000, 500, 800)),
        ("telegram:1", T1, "anthropic:claude-sonnet-4-6", Usage(1000, 500, 0)),
        ("whatsapp:34600", T1, "openai:my-local-llama", Usage(300, 40)),
    ]
    for key, at, model, usage in rows:
        state = await store.turn_state(key, 6, at)
        await store.record_exchange(
            NewExchange(
                state.session_id,
                state.episode.id,
                "q",
                "a",
                True,
                None,
                at,
                model=model,
                usage=usage,
            )
        )
    await store.close()


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "usage.db"
    for name in ("VENTANA_CONFIG", "VENTANA_CHAT_MODEL", "VENTANA_SUMMARY_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VENTANA_DB", str(path))
    asyncio.run(_seed(path))
    return path


def main(argv: list[str]) -> int:
    """The program's own parser and runner, without `main`'s logging setup (which would
    bind structlog to pytest's captured stdout)."""
    args = build_parser().parse_args(argv)
    return asyncio.run(args.runner(args, load_settings()))  # type: ignore[no-any-return]


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["usage", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_json_per_key_and_model_with_costs(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each key lists its models with tokens; a known price is costed, an unknown is null."""
    report = _json(capsys)
    keys = {k["key"]: k for k in report["keys"]}  # type: ignore[attr-defined]
    [sonnet] = keys["telegram:1"]["models"]
    assert (sonnet["calls"], sonnet["input_tokens"], sonnet["cached_tokens"]) == (2, 2000, 800)
    # $3/M input, $0.30/M cache read, $15/M output: 0.00834 + 0.0105
    assert sonnet["cost_usd"] == "0.01884"
    assert keys["telegram:1"]["cost_usd"] == "0.01884"
    [local] = keys["whatsapp:34600"]["models"]
    assert local["cost_usd"] is None
    assert report["cost_usd"] is None  # never a partial total that reads as the bill


def test_key_and_since_filter(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """KEY keeps one key; --since keeps calls from that date on."""
    report = _json(capsys, "telegram:1", "--since", "2026-03-03")
    [entry] = report["keys"]  # type: ignore[misc]
    assert entry["key"] == "telegram:1"
    assert entry["models"][0]["calls"] == 1
    assert entry["cost_usd"] == "0.0105"  # 1,000 in at $3/M + 500 out at $15/M


def test_table_says_unknown_for_an_unpriced_model(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text view shows both tables and 'unknown' where no price is known."""
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["usage"]) == 0
    out = capsys.readouterr().out
    assert "openai:my-local-llama" in out
    assert "unknown" in out
    assert "$0.01884" in out


def test_table_shows_control_characters_of_keys_and_models() -> None:
    """A key or a provider-reported model name with an ESC is shown as `\\x1b`, not obeyed."""
    total = UsageTotal("console:\x1b[2J", "chat", "openai:m\x1b]0;x\x07", 1, 2, 3, 0, T0, T0)
    out = io.StringIO()
    render(build_report([total]), Console(file=out, width=200))
    assert not {"\x1b", "\x07"} & set(out.getvalue())
    assert "console:\\x1b[2J" in out.getvalue()
    assert "openai:m\\x1b]0;x\\x07" in out.getvalue()


def test_bad_since_is_a_clear_error(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --since that is not a date exits 2 with a message naming it."""
    with pytest.raises(SystemExit) as exit_:
        main(["usage", "--since", "last week"])
    assert exit_.value.code == 2
    assert "'last week' is not a date" in capsys.readouterr().err


async def _open_session(db: Path, key: str) -> None:
    """A session with an exchange no provider reported usage for."""
    store = await SQLiteStore.open(db)
    state = await store.turn_state(key, 6, T1)
    await store.record_exchange(
        NewExchange(state.session_id, state.episode.id, "q", "a", True, None, T1)
    )
    await store.close()


def test_an_unknown_key_exits_1(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A key the database does not hold is an error (as in inspect, export, forget); a
    known key with no usage yet is an empty report with status 0."""
    assert main(["usage", "console:nobody"]) == 1
    assert main(["usage", "console:nobody", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("unknown session key 'console:nobody'") == 2
    asyncio.run(_open_session(db, "console:quiet"))
    assert main(["usage", "console:quiet"]) == 0
    assert "no usage recorded for console:quiet" in capsys.readouterr().out


async def _seed_postgres(url: str) -> None:
    store = await PostgresStore.open(url, pool_size=1)
    state = await store.turn_state("telegram:9", 6, T0)
    new = NewExchange(state.session_id, state.episode.id, "q", "a", True, None, T0)
    await store.record_exchange(
        replace(new, model="anthropic:claude-sonnet-4-6", usage=Usage(10, 4))
    )
    await store.close()


def test_usage_reads_a_postgres_database(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `VENTANA_DB=postgresql://…` the usage recorded there is reported."""
    for name in ("VENTANA_CONFIG", "VENTANA_CHAT_MODEL", "VENTANA_SUMMARY_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VENTANA_DB", postgres_url)
    asyncio.run(_seed_postgres(postgres_url))
    report = _json(capsys)
    [entry] = report["keys"]  # type: ignore[misc]
    [model] = entry["models"]
    assert (entry["key"], model["calls"], model["input_tokens"]) == ("telegram:9", 1, 10)
