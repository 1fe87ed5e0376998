"""The recall index on every backend: indexed with each signal exchange, scoped, erased
on forget. The port-level tests run on SQLite (file and memory) and PostgreSQL with the
same planted facts, queries and expected hits; the byte-level ones are SQLite's own."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.recall.port import RecallQuery
from memory.recall.terms import query_terms
from memory.store.episodes import NewEpisode
from memory.store.sqlite import recall_index
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from memory.types import TurnState
from tests.memory.recall.conftest import RecallStore

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MARKER = "Zorblaxquiff"  # a word no other test or seed writes


async def say(store: RecallStore, key: str, texts: list[str], *, signal: bool = True) -> list[int]:
    state = await store.turn_state(key, 6, T0)
    ids = []
    for n, text in enumerate(texts):
        ex = await store.record_exchange(
            NewExchange(
                state.session_id, state.episode.id, text, f"anotado: {text}", signal,
                None if signal else "empty", T0 + timedelta(minutes=n),
            )
        )  # fmt: skip
        ids.append(ex.id)
    return ids


async def state_of(store: RecallStore, key: str) -> TurnState:
    return await store.turn_state(key, 6, T0)


async def search(store: RecallStore, key: str, text: str, before: int | None = None) -> list[int]:
    state = await state_of(store, key)
    hits = await store.recall(
        RecallQuery(state.session_id, state.episode.id, query_terms(text), before)
    )
    return [h.exchange.id for h in hits]


async def checkpoint(db: Path) -> None:
    """A full TRUNCATE checkpoint, retried while the store's background one is running."""
    con = sqlite3.connect(db)
    try:
        for _ in range(100):
            if con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the WAL could not be checkpointed")
    finally:
        con.close()


def files_of(folder: Path) -> bytes:
    """Every byte of the database files (db, -wal, -shm), lowercased."""
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.name.startswith("s.db")).lower()


def filler(n: int) -> list[str]:
    return [f"consulta rutinaria numero {i} sobre la cuenta" for i in range(n)]


async def test_found_by_inflection_and_fact(recall_store: RecallStore) -> None:
    """An early exchange is found by another inflection of its words or by its id."""
    store = recall_store
    ids = await say(store, "console:a", ["Migré el dominio; el pedido #4821", *filler(20)])
    assert await search(store, "console:a", "¿cuándo fue la migración?") == [ids[0]]
    assert await search(store, "console:a", "what about 4821") == [ids[0]]


async def test_noise_is_never_indexed(recall_store: RecallStore) -> None:
    """A noise exchange is stored but never found, and adds nothing to the index."""
    store = recall_store
    await say(store, "console:n", filler(10))
    await say(store, "console:n", [f"{MARKER} averia"], signal=False)
    assert await search(store, "console:n", f"{MARKER} averia") == []
    indexed, _ = await store.recall_index_size("console:n")
    assert indexed == 10


async def test_search_excludes_the_bound_and_other_keys(recall_store: RecallStore) -> None:
    """Only the key's own exchanges older than the bound (window and pending) are searched."""
    store = recall_store
    mine = await say(store, "telegram:1", [f"el router {MARKER} falla", *filler(10)])
    theirs = await say(store, "whatsapp:1", [f"el router {MARKER} falla", *filler(10)])
    assert await search(store, "telegram:1", f"router {MARKER}") == [mine[0]]
    assert await search(store, "whatsapp:1", f"router {MARKER}") == [theirs[0]]
    assert await search(store, "telegram:1", f"router {MARKER}", before=mine[0]) == []


async def test_a_reset_scopes_recall_and_undo_brings_it_back(recall_store: RecallStore) -> None:
    """After a reset the old episode is not searched (its rows stay); /undo restores it."""
    store = recall_store
    ids = await say(store, "console:r", [f"la clave {MARKER} del wifi", *filler(10)])
    state = await state_of(store, "console:r")
    await store.start_episode(NewEpisode(state.session_id, "manual", T0 + timedelta(hours=1)))
    assert await search(store, "console:r", f"clave {MARKER}") == []
    assert (await store.recall_index_size("console:r"))[0] == 11  # scoped, not deleted
    assert await store.undo_reset(state.session_id, T0 + timedelta(hours=1), 3600)
    assert await search(store, "console:r", f"clave {MARKER}") == [ids[0]]


async def test_accents_and_hard_facts_match_exactly(recall_store: RecallStore) -> None:
    """Accents fold both ways; a hard fact matches whole (order-731 by "pedido 731", an IP
    by itself) and a near-miss of it matches nothing."""
    store = recall_store
    ids = await say(
        store,
        "console:f",
        ["Mi pedido order-731 llegó dañado a Córdoba", "El servidor 10.0.0.5 no responde",
         *filler(20)],
    )  # fmt: skip
    assert await search(store, "console:f", "el envio a cordoba") == [ids[0]]
    assert await search(store, "console:f", "¿y el pedido 731?") == [ids[0]]
    assert await search(store, "console:f", "¿sigue caído 10.0.0.5?") == [ids[1]]
    assert await search(store, "console:f", "¿y 10.0.0.6?") == []


async def test_a_routine_message_recalls_nothing(recall_store: RecallStore) -> None:
    """Words in many of the key's exchanges are not searched; a message of only those
    (or of words never said) recalls nothing: the minimum score holds."""
    store = recall_store
    await say(store, "console:m", [f"el envío {MARKER} se perdió", *filler(30)])
    assert await search(store, "console:m", "otra consulta sobre la cuenta") == []
    assert await search(store, "console:m", "¿tienen oficina en Sevilla?") == []


async def test_user_text_never_becomes_query_syntax(recall_store: RecallStore) -> None:
    """Quotes, operators and FTS/tsquery syntax in the message are plain words."""
    store = recall_store
    ids = await say(store, "console:q", [f"la factura {MARKER} duplicada", *filler(20)])
    nasty = f"\"{MARKER}\" | !'x' & (factura:*) NEAR OR * ''\\ <-> :A"
    assert await search(store, "console:q", nasty) == [ids[0]]
    assert await search(store, "console:q", "' | ! & ( ) : * \\ <->") == []


async def test_forget_removes_the_key_from_the_index(recall_store: RecallStore) -> None:
    """After forget the key has no indexed exchange and recalls nothing once it comes
    back; another key's entries survive."""
    store = recall_store
    await say(store, "telegram:9", [f"mi clave {MARKER} del banco", *filler(10)])
    theirs = await say(store, "telegram:8", [f"otra clave {MARKER} vecina", *filler(10)])
    await store.forget("telegram:9")
    assert (await store.recall_index_size("telegram:9"))[0] == 0
    await say(store, "telegram:9", filler(3))
    assert await search(store, "telegram:9", f"clave {MARKER}") == []
    assert await search(store, "telegram:8", f"clave {MARKER}") == [theirs[0]]
    assert (await store.recall_index_size("telegram:8"))[0] == 11


async def test_forget_leaves_no_indexed_byte(tmp_path: Path) -> None:
    """After forget and a checkpoint no byte of the key's text is in the db or -wal, FTS
    shadow tables included (raw and as indexed); another key's entries survive."""
    db = tmp_path / "s.db"
    store = await SQLiteStore.open(db)
    secret = f"{MARKER}secreto"
    indexed_form = recall_index.body(1, recall_index.exchange_terms(secret, ""))  # as indexed
    try:
        await say(store, "telegram:9", [f"mi clave es {secret} y mi pin 99173", *filler(30)])
        await say(store, "telegram:8", [f"otra cosa {MARKER}vecino", *filler(30)])
        raw = db.read_bytes() + (tmp_path / "s.db-wal").read_bytes()
        assert secret.lower().encode() in raw.lower()  # the test would see it if it stayed
        await store.forget("telegram:9")
        await checkpoint(db)
        blob = files_of(tmp_path)
        for needle in (secret, indexed_form.split()[1], "99173"):
            assert needle.lower().encode() not in blob, needle
        assert f"{MARKER}vecino".lower().encode() in blob
        assert await search(store, "telegram:8", f"{MARKER}vecino")
    finally:
        await store.close()


async def test_migration_backfills_an_existing_database(tmp_path: Path) -> None:
    """Exchanges stored before the index existed are indexed when the store opens."""
    db = tmp_path / "s.db"
    store = await SQLiteStore.open(db)
    ids = await say(store, "console:m", [f"el envío {MARKER} se perdió", *filler(10)])
    await store.close()
    con = sqlite3.connect(db)
    for shard in range(recall_index.SHARDS):
        con.execute(f"DELETE FROM recall_fts_{shard}")
    con.execute("UPDATE recall_meta SET built = 0")
    con.commit()
    con.close()
    store = await SQLiteStore.open(db)
    try:
        assert await search(store, "console:m", f"envio {MARKER}") == [ids[0]]
        assert (await store.recall_index_size("console:m"))[0] == 11
    finally:
        await store.close()


def test_rebuild_shows_a_progress_bar_when_large(tmp_path: Path, capsys: object) -> None:
    """A large backfill draws a progress bar on stderr and indexes every signal row."""
    import pytest

    assert isinstance(capsys, pytest.CaptureFixture)
    db = tmp_path / "s.db"
    from bench.data.seed import SeedSession, seed

    seed(db, [SeedSession("telegram:1", 300, pending=2)])
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN")
    assert recall_index.rebuild(con, progress=True) == 300
    con.execute("COMMIT")
    con.close()
    assert "recall index" in capsys.readouterr().err


async def test_segments_of_a_shard_stay_few_as_exchanges_come_in(tmp_path: Path) -> None:
    """Each shard merges a level at `CRISIS_MERGE` segments, so a search seeks few of them."""
    store = await SQLiteStore.open(tmp_path / "m.db")
    try:
        await say(store, "telegram:1", [f"mensaje {n} sobre el router" for n in range(40)])
        state = await state_of(store, "telegram:1")
    finally:
        await store.close()
    con = sqlite3.connect(tmp_path / "m.db")
    name = recall_index.table(state.session_id)
    (setting,) = con.execute(f"SELECT v FROM {name}_config WHERE k = 'crisismerge'").fetchone()
    (segments,) = con.execute(f"SELECT COUNT(DISTINCT segid) FROM {name}_idx").fetchone()
    con.close()
    assert setting == recall_index.CRISIS_MERGE
    assert segments < 2 * recall_index.CRISIS_MERGE  # 40 commits, one segment each
