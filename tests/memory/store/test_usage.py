"""Provider-reported usage is stored with the exchange and the summary, and forgotten:
on every backend (`store` runs each test once per backend of `conftest.BACKENDS`)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from memory.store import Store
from memory.store.episodes import NewEpisode
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.store.usage import UsageQueries
from providers.base import Usage

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def _exchange(store: Store, key: str, at: datetime, usage: Usage | None) -> int:
    state = await store.turn_state(key, 6, at)
    ex = await store.record_exchange(
        NewExchange(
            session_id=state.session_id,
            episode_id=state.episode.id,
            user_text="hola",
            reply_text="qué tal",
            signal=usage is not None,
            noise_reason=None if usage else "provider_error:auth",
            created_at=at,
            model="anthropic:claude-sonnet-4-6" if usage else "",
            usage=usage,
        )
    )
    return state.episode.id if ex.id else 0


async def test_chat_and_fold_usage_per_key_and_model(store: Store) -> None:
    """Each chat call and fold adds a row; totals group by key, purpose and model."""
    assert isinstance(store, UsageQueries)
    episode = await _exchange(store, "telegram:1", T0, Usage(100, 20, 60))
    await _exchange(store, "telegram:1", T0 + timedelta(minutes=1), Usage(150, 30, 0))
    await _exchange(store, "telegram:2", T0, Usage(7, 3))
    await _exchange(store, "telegram:2", T0, None)  # an error: the provider reported nothing
    await store.write_summary(
        NewSummary(episode, 0, "resumen", 1, "v1", "openai:gpt-4.1-nano", 1, 1, 400, 80, T0)
    )
    totals = {(t.key, t.purpose, t.model): t for t in await store.usage_totals()}
    chat = totals[("telegram:1", "chat", "anthropic:claude-sonnet-4-6")]
    assert (chat.calls, chat.input_tokens, chat.output_tokens, chat.cached_tokens) == (
        2,
        250,
        50,
        60,
    )
    fold = totals[("telegram:1", "fold", "openai:gpt-4.1-nano")]
    assert (fold.calls, fold.input_tokens, fold.output_tokens) == (1, 400, 80)
    assert totals[("telegram:2", "chat", "anthropic:claude-sonnet-4-6")].calls == 1
    only = await store.usage_totals("telegram:2")
    assert {t.key for t in only} == {"telegram:2"}
    later = await store.usage_totals(since=T0 + timedelta(seconds=30))
    assert [(t.key, t.calls) for t in later] == [("telegram:1", 1)]
    assert chat.first_at == T0
    assert chat.last_at == T0 + timedelta(minutes=1)


async def test_undo_drops_the_usage_of_the_folds_it_drops(store: Store) -> None:
    """An undone episode's summary versions go, and their fold usage with them; the
    chat calls stay (their exchanges move back)."""
    assert isinstance(store, UsageQueries)
    await _exchange(store, "telegram:3", T0, Usage(10, 2))
    state = await store.turn_state("telegram:3", 6, T0)
    fresh = await store.start_episode(NewEpisode(state.session_id, "auto:topic", T0))
    await _exchange(store, "telegram:3", T0, Usage(20, 4))
    await store.write_summary(NewSummary(fresh.id, 0, "r", 1, "v1", "offline", 1, 1, 5, 1, T0))
    assert {t.purpose for t in await store.usage_totals("telegram:3")} == {"chat", "fold"}
    assert await store.undo_reset(state.session_id, T0, 3600) is not None
    [chat] = await store.usage_totals("telegram:3")
    assert (chat.purpose, chat.calls) == ("chat", 2)


async def test_forget_erases_usage(store: Store) -> None:
    """After forget, no usage row of the key remains (the other key's stay)."""
    assert isinstance(store, UsageQueries)
    await _exchange(store, "whatsapp:34600", T0, Usage(10, 5))
    await _exchange(store, "whatsapp:34601", T0, Usage(1, 1))
    await store.forget("whatsapp:34600")
    assert [t.key for t in await store.usage_totals()] == ["whatsapp:34601"]


async def test_forget_leaves_no_usage_row_in_the_sqlite_file(tmp_path: Path) -> None:
    """After forget, the SQLite file itself holds no usage row."""
    store = await SQLiteStore.open(tmp_path / "f.db")
    await _exchange(store, "whatsapp:34600", T0, Usage(10, 5))
    await store.forget("whatsapp:34600")
    await store.close()
    with sqlite3.connect(tmp_path / "f.db") as db:
        assert db.execute("SELECT COUNT(*) FROM usage").fetchone() == (0,)


async def test_forget_leaves_no_usage_row_in_postgres(postgres_url: str) -> None:
    """After forget, the PostgreSQL table holds no usage row."""
    store = await PostgresStore.open(postgres_url, pool_size=1)
    await _exchange(store, "whatsapp:34600", T0, Usage(10, 5))
    await store.forget("whatsapp:34600")
    await store.close()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT count(*) FROM usage").fetchone() == (0,)


async def test_usage_table_comes_from_its_named_migration(tmp_path: Path) -> None:
    """SQLite: the usage table is created by a recorded `NNNN_usage` migration, after the
    initial one."""
    store = await SQLiteStore.open(tmp_path / "m.db")
    applied = await store.applied_migrations()
    await store.close()
    [usage] = [name for name in applied if name.endswith("_usage")]
    assert applied.index(usage) > applied.index("0001_initial")
    with sqlite3.connect(tmp_path / "m.db") as db:
        assert db.execute("SELECT COUNT(*) FROM usage").fetchone() == (0,)


async def test_postgres_usage_table_comes_from_its_named_migration(
    postgres_empty_url: str,
) -> None:
    """PostgreSQL: the usage table is created by the recorded `0007_usage` migration."""
    store = await PostgresStore.open(postgres_empty_url, pool_size=1)
    applied = await store.applied_migrations()
    await store.close()
    assert applied.index("0007_usage") > applied.index("0001_initial")
    with psycopg.connect(postgres_empty_url) as db:
        assert db.execute("SELECT count(*) FROM usage").fetchone() == (0,)
