"""Provider-reported usage is stored with the exchange and the summary, and forgotten."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.store.conversation import NewExchange, NewSummary
from memory.store.sqlite.store import SQLiteStore
from memory.store.usage import UsageQueries
from providers.base import Usage

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def _exchange(store: SQLiteStore, key: str, at: datetime, usage: Usage | None) -> int:
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


async def test_chat_and_fold_usage_per_key_and_model(tmp_path: Path) -> None:
    """Each chat call and fold adds a row; totals group by key, purpose and model."""
    store = await SQLiteStore.open(tmp_path / "u.db")
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
    await store.close()


async def test_forget_erases_usage(tmp_path: Path) -> None:
    """After forget, no usage row of the key remains in the file."""
    store = await SQLiteStore.open(tmp_path / "f.db")
    await _exchange(store, "whatsapp:34600", T0, Usage(10, 5))
    await store.forget("whatsapp:34600")
    assert await store.usage_totals() == []
    await store.close()
    with sqlite3.connect(tmp_path / "f.db") as db:
        assert db.execute("SELECT COUNT(*) FROM usage").fetchone() == (0,)


async def test_usage_table_comes_from_its_named_migration(tmp_path: Path) -> None:
    """The usage table is created by a recorded `NNNN_usage` migration, after the initial one."""
    store = await SQLiteStore.open(tmp_path / "m.db")
    applied = await store.applied_migrations()
    await store.close()
    [usage] = [name for name in applied if name.endswith("_usage")]
    assert applied.index(usage) > applied.index("0001_initial")
    with sqlite3.connect(tmp_path / "m.db") as db:
        assert db.execute("SELECT COUNT(*) FROM usage").fetchone() == (0,)
