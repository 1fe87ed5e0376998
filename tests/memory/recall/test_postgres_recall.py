"""Recall on PostgreSQL: the same ranked hits as SQLite, its migration and backfill, and
query text that stays data at the SQL level."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import psycopg
from psycopg.rows import dict_row
from structlog.testing import capture_logs

from memory.recall.port import RecallQuery
from memory.recall.related import search_terms
from memory.recall.terms import QueryTerm, query_terms
from memory.store.postgres import recall
from memory.store.postgres.migrations import MIGRATIONS, migrate
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore
from tests.memory.recall.conftest import RecallStore
from tests.memory.recall.test_index import MARKER, T0, say, state_of

CASE = [
    "Hola, mi pedido order-731 llegó dañado a Córdoba",
    "The invoice INV-2291 was charged twice on my card",
    "Cambié los NS a ns1.hostnube.net el 14 de febrero",
    "El técnico Ramiro Quesada vino el martes",
    "My router keeps dropping the VPN every hour",
    "Pagué 49,90 € por la migración del dominio",
    "La migración del correo falló dos veces",
    "I was charged again for the same invoice",
    "El servidor 10.0.0.5 no responde desde ayer",
    "Ramiro dijo que volvería con el router nuevo",
]
FILLER = [
    "Sigue sin llegar el correo a la bandeja de entrada",
    "El panel tarda mucho en cargar esta mañana",
    "Reinicié el ordenador como me dijiste y nada",
    "Ya borré la caché del navegador",
]
QUESTIONS = [
    "¿qué pasó con el pedido 731?",
    "why was I charged twice?",
    "¿cuándo cambié los NS?",
    "¿cómo se llamaba el técnico Ramiro?",
    "the VPN on the router again",
    "¿cuánto costó la migración?",
    "¿sigue caído 10.0.0.5?",
    "muchas gracias por todo",
]


async def ranked(store: RecallStore, key: str) -> list[list[tuple[int, float, tuple[str, ...]]]]:
    state = await state_of(store, key)
    out = []
    for question in QUESTIONS:
        query = query_terms(question)
        hits = await store.recall(RecallQuery(state.session_id, state.episode.id, query))
        out.append([(h.exchange.id, h.score, h.matched) for h in hits])
    return out


async def test_sqlite_and_postgres_give_the_same_ranked_hits(
    postgres_url: str, tmp_path: Path
) -> None:
    """The same seeded exchanges give the same hits (ids, order, scores, matched terms)."""
    texts = [*CASE, *(f"{FILLER[n % 4]} ({n})" for n in range(30))]
    results = []
    for store in (
        await SQLiteStore.open(tmp_path / "s.db"),
        await PostgresStore.open(postgres_url, pool_size=2),
    ):
        try:
            await say(store, "whatsapp:34600", texts)
            results.append(await ranked(store, "whatsapp:34600"))
        finally:
            await store.close()
    sqlite, postgres = results
    assert postgres == sqlite
    assert sum(1 for hits in sqlite if hits) >= 6  # the comparison is not of empty lists
    assert any(len(hits) >= 2 for hits in sqlite)  # and the order is compared too
    assert sqlite[-1] == []  # a routine message recalls nothing on either


async def test_crafted_query_terms_stay_lexemes(postgres_url: str) -> None:
    """A query term holding tsquery syntax is one quoted lexeme: it matches nothing and
    never reads the key's document mark or another key's lexemes."""
    store = await PostgresStore.open(postgres_url, pool_size=2)
    try:
        await say(store, "console:x", [f"la clave {MARKER}", "otra cosa"])
        state = await state_of(store, "console:x")
        for term in ("x' | 'k1__n", "x' | '", "a\\' | k1_clav:*", "!k1_clav", "k1_clav"):
            query = [QueryTerm(term, 4.0, hard=True)]
            assert await store.recall(RecallQuery(state.session_id, state.episode.id, query)) == []
    finally:
        await store.close()


async def test_an_oversized_term_is_skipped_not_fatal(postgres_url: str) -> None:
    """A token past PostgreSQL's lexeme limit is left out; the exchange is stored and its
    other words found."""
    store = await PostgresStore.open(postgres_url, pool_size=2)
    try:
        texts = [f"{'9' * 3000} {MARKER} adjunto", *FILLER * 5]
        ids = await say(store, "console:big", texts)
        assert (await store.recall_index_size("console:big"))[0] == 21
        state = await state_of(store, "console:big")
        hits = await store.recall(
            RecallQuery(state.session_id, state.episode.id, query_terms(MARKER))
        )
        assert [h.exchange.id for h in hits] == [ids[0]]
    finally:
        await store.close()


async def _old_schema_with_rows(url: str) -> None:
    """A database as migrations 0001–0005 left it, with exchanges stored back then."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await migrate(conn, MIGRATIONS[:5])
        await conn.execute("INSERT INTO sessions (key, created_at) VALUES ('console:o', %s)", [T0])
        await conn.execute("INSERT INTO episodes (session_id, started_at) VALUES (1, %s)", [T0])
        await conn.execute("UPDATE sessions SET current_episode_id = 1")
        rows = [(f"el envío {MARKER} se perdió", True), (f"{MARKER} error", False)]
        rows += [(f"consulta rutinaria {n}", True) for n in range(10)]
        for n, (text, signal) in enumerate(rows):
            await conn.execute(
                "INSERT INTO exchanges (session_id, episode_id, user_text, reply_text, signal,"
                " created_at) VALUES (1, 1, %s, 'ok', %s, %s)",
                (text, signal, T0 + timedelta(minutes=n)),
            )


async def test_the_migration_replaces_the_old_vector_and_backfills(
    postgres_empty_url: str,
) -> None:
    """An existing database gets the per-key index of its stored signal exchanges (noise
    left out) and loses the old generated column."""
    await _old_schema_with_rows(postgres_empty_url)
    store = await PostgresStore.open(postgres_empty_url, pool_size=2)
    try:
        assert "0006_recall_index" in await store.applied_migrations()
        state = await state_of(store, "console:o")
        query = query_terms(f"envio {MARKER}")
        hits = await store.recall(RecallQuery(state.session_id, state.episode.id, query))
        assert [h.exchange.id for h in hits] == [1]
        assert (await store.recall_index_size("console:o"))[0] == 11
        async with await psycopg.AsyncConnection.connect(postgres_empty_url) as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM information_schema.columns"
                " WHERE table_name = 'exchanges' AND column_name = 'search'"
            )
            assert await cur.fetchone() == (0,)
    finally:
        await store.close()


async def test_a_large_backfill_logs_its_progress_in_batches(postgres_url: str) -> None:
    """The backfill indexes what is missing batch by batch and logs each batch's count."""
    store = await PostgresStore.open(postgres_url, pool_size=2)
    await say(store, "console:b", [f"mensaje {n}" for n in range(10)])
    await say(store, "console:b", ["ruido"], signal=False)
    await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_url, row_factory=dict_row) as conn:
        await conn.execute("DELETE FROM recall_index WHERE exchange_id > 3")
        with capture_logs() as logs:
            assert await recall.backfill(conn, batch=3, log_from=5) == 7
        assert await recall.backfill(conn, batch=3, log_from=5) == 0
        await conn.commit()
    progress = [(e["done"], e["total"]) for e in logs if e["event"] == "recall_backfill"]
    assert progress == [(3, 7), (6, 7), (7, 7)]


async def test_a_migration_merged_in_between_takes_the_next_version(
    postgres_empty_url: str,
) -> None:
    """A database that already has a later migration gets the recall one under the next
    free version number (the order applied), never a taken one."""

    async def later(conn: psycopg.AsyncConnection[object]) -> None:
        await conn.execute("CREATE TABLE later_step (id INTEGER)")

    steps = (*MIGRATIONS[:5], ("0099_later", later))
    async with await psycopg.AsyncConnection.connect(postgres_empty_url, autocommit=True) as conn:
        await migrate(conn, steps)
        applied = await migrate(conn, (*MIGRATIONS, ("0099_later", later)))
        cur = await conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        rows = await cur.fetchall()
    assert applied == [name for name, _ in MIGRATIONS[5:]]
    assert rows[5:] == [(6, "0099_later"), *((7 + n, name) for n, name in enumerate(applied))]


async def _two_statements(store: PostgresStore, query: RecallQuery) -> list[object]:
    """The search as it was before `SEARCH_ONE`: the key's statistics, then candidates."""
    async with store.db.connection() as conn:
        docs, df = await recall.key_stats(conn, query.session_id, query.terms)
        wanted = recall.searchable(query.terms, df, docs)
        if not wanted:
            return []
        found = await recall._candidates(
            conn, query, query.episode_id, query.before, wanted, df, docs
        )
    return [(h.exchange.id, h.score, h.matched) for h in recall.rank(wanted, found, df, docs, 20)]


async def test_one_statement_ranks_as_the_statistics_then_the_search_did(
    postgres_url: str,
) -> None:
    """`SEARCH_ONE` (statistics, searchable terms and IDF weights computed by the server)
    gives the very hits of the two statements it replaced: common words left out, hard
    facts kept, related words weighed, an id bound respected."""
    store = await PostgresStore.open(postgres_url, pool_size=2)
    try:
        texts = [*CASE, *(f"{FILLER[n % 4]} ({n})" for n in range(30))]
        await say(store, "whatsapp:34601", texts)
        state = await state_of(store, "whatsapp:34601")
        extra = ["el correo no llega", "what vehicle do I own?", "router router VPN 10.0.0.5"]
        compared = 0
        for question in [*QUESTIONS, *extra]:
            for before in (None, 20):
                query = RecallQuery(
                    state.session_id, state.episode.id, search_terms(question), before, 20
                )
                async with store.db.connection() as conn:
                    one = await recall.search_one(conn, query)
                mine = [(h.exchange.id, h.score, h.matched) for h in one]
                assert mine == await _two_statements(store, query), question
                compared += bool(mine)
        assert compared >= 10
    finally:
        await store.close()


async def test_a_connection_plans_the_search_once_and_finds_the_same(postgres_url: str) -> None:
    """After the server's first custom plans, `SEARCH_ONE` runs on its generic plan (no
    planning at every search) and the generic plan finds what the custom ones found."""
    store = await PostgresStore.open(postgres_url, pool_size=1)
    try:
        await say(store, "whatsapp:34602", [*CASE, *FILLER])
        state = await state_of(store, "whatsapp:34602")
        queries = [
            RecallQuery(state.session_id, state.episode.id, query_terms(q)) for q in QUESTIONS
        ]
        async with store.db.connection() as conn:
            rounds = []
            for _ in range(2):
                found = [await recall.search_one(conn, q) for q in queries]
                rounds.append([[(h.exchange.id, h.score) for h in hits] for hits in found])
            cur = await conn.execute(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE strpos(statement, %s) > 0",
                ("FROM recall_index r WHERE r.terms @@ u.q",),
            )
            plans = await cur.fetchone()
    finally:
        await store.close()
    assert rounds[0] == rounds[1]
    assert sum(bool(hits) for hits in rounds[0]) >= 5
    assert plans == {"generic_plans": 2 * len(QUESTIONS) - 5, "custom_plans": 5}


async def test_the_search_keeps_its_generic_plan_on_a_large_table(
    postgres_empty_url: str,
) -> None:
    """On a large table the server used to re-plan `SEARCH_ONE` at every search (~0.3 ms):
    a custom plan that saw the episode, the id bound and the LIMIT looked cheaper than the
    generic one, so it never settled. Every value now reaches the plan through a scalar
    subquery: custom and generic plans cost alike and the connection settles on the
    generic one as on a small table; so does the statistics statement of the search made
    while a soft reset's closed case is in play. A large table is simulated by its
    statistics (the planner scales `reltuples`; a fresh database, so no other test sees
    them)."""
    store = await PostgresStore.open(postgres_empty_url, pool_size=1)
    try:
        await say(store, "whatsapp:34603", [*CASE, *FILLER])
        state = await state_of(store, "whatsapp:34603")
        async with await psycopg.AsyncConnection.connect(postgres_empty_url) as conn:
            await conn.set_autocommit(True)
            await conn.execute("ANALYZE")
            await conn.execute(
                "UPDATE pg_class SET reltuples = reltuples * 100000"
                " WHERE relname IN ('recall_index', 'exchanges')"
            )
        queries = [
            RecallQuery(state.session_id, state.episode.id, query_terms(q)) for q in QUESTIONS
        ]
        async with store.db.connection() as conn:
            found = [await recall.search_one(conn, q) for q in [*queries, *queries]]
            stats = [await recall.key_stats(conn, q.session_id, q.terms) for q in queries]
            cur = await conn.execute(
                "SELECT strpos(statement, 'WITH s AS') = 1 AS one, generic_plans, custom_plans"
                " FROM pg_prepared_statements WHERE strpos(statement, %s) > 0 ORDER BY one",
                ("FROM recall_index r WHERE r.terms @@ u.q",),
            )
            plans = await cur.fetchall()
    finally:
        await store.close()
    assert found[: len(queries)] == found[len(queries) :]
    assert sum(bool(hits) for hits in found) >= 10
    assert all(docs == len(CASE) + len(FILLER) for docs, _ in stats)
    assert plans == [  # the statistics alone (the soft reset's search), then `SEARCH_ONE`
        {"one": False, "generic_plans": len(QUESTIONS) - 5, "custom_plans": 5},
        {"one": True, "generic_plans": 2 * len(QUESTIONS) - 5, "custom_plans": 5},
    ]
