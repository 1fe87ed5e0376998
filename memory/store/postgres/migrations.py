"""PostgreSQL schema: an ordered list of named migration functions, recorded in
`schema_migrations` and applied at start.

All pending steps run in one transaction under a transaction-scoped advisory lock, so
two workers starting together never race: the second waits, then finds them applied.
DDL is transactional in PostgreSQL, so a failed step leaves the schema as it was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import structlog

from memory.store.postgres import recall
from memory.store.postgres.sql import INTAKE_FUNCTION, LANE_FUNCTION

log = structlog.get_logger(__name__)
Conn = psycopg.AsyncConnection[Any]
Migration = Callable[[Conn], Awaitable[None]]

# The advisory lock key of migrations (the per-chat locks use another class id).
MIGRATION_LOCK = 0x76656E74  # "vent"
# Provider-reported usage of every chat call and fold, written by the statement that
# stores the exchange (`sql.RECORD_EXCHANGE`) or the summary version (`sql.SUMMARY_INSERT`),
# so usage and what it paid for commit together. Rows hang off the session, so forget
# erases them with it; a fold's row goes with its summary version (an undo drops both).
# `exchange_id` names the exchange without a foreign key: exchanges are only ever deleted
# with their session, which takes the row too, and a key would cost an index and a check
# on every turn.
USAGE_TABLE = """
CREATE TABLE usage (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    exchange_id BIGINT,
    summary_id BIGINT REFERENCES summaries(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX usage_by_session ON usage(session_id, created_at);
CREATE INDEX usage_by_time ON usage(created_at);
CREATE INDEX usage_by_summary ON usage(summary_id) WHERE summary_id IS NOT NULL;
"""

_TABLES = """
CREATE TABLE sessions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    last_activity_at TIMESTAMPTZ,
    debug BOOLEAN NOT NULL DEFAULT FALSE,
    current_episode_id BIGINT
);
CREATE TABLE episodes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ,
    close_reason TEXT,
    opened_by TEXT,
    reset_signals TEXT,
    reopened_at TIMESTAMPTZ
);
CREATE INDEX episodes_by_session ON episodes(session_id, id);
CREATE TABLE exchanges (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    episode_id BIGINT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    external_id TEXT,
    user_text TEXT NOT NULL,
    reply_text TEXT NOT NULL,
    signal BOOLEAN NOT NULL,
    noise_reason TEXT,
    stop_reason TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    reply_tokens INTEGER NOT NULL DEFAULT 0,
    topic TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (session_id, external_id)
);
CREATE INDEX exchanges_window ON exchanges(episode_id, signal, id);
CREATE INDEX exchanges_by_session ON exchanges(session_id, id);
CREATE TABLE summaries (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    episode_id BIGINT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    checkpoint BIGINT NOT NULL,
    prompt_version TEXT NOT NULL,
    model TEXT NOT NULL,
    source_from BIGINT NOT NULL,
    source_to BIGINT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    round INTEGER NOT NULL DEFAULT 1,
    dropped_facts TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (episode_id, version)
);
CREATE TABLE inbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key TEXT NOT NULL,
    external_id TEXT NOT NULL,
    user_ref TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    replies TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (session_key, external_id)
);
CREATE INDEX inbox_unfinished ON inbox(session_key, id) WHERE status <> 'done';
CREATE INDEX inbox_by_age ON inbox(updated_at) WHERE status = 'done';
"""

# unaccent() is STABLE (it reads a dictionary), so a generated column needs an IMMUTABLE
# wrapper naming the dictionary explicitly: the usual, documented workaround.
_SEARCH = """
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;
CREATE FUNCTION ventana_fold(TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;
ALTER TABLE exchanges ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN signal
         THEN to_tsvector('simple'::regconfig, ventana_fold(user_text || ' ' || reply_text))
    END
) STORED;
CREATE INDEX exchanges_search ON exchanges USING GIN (search);
"""


async def _initial(conn: Conn) -> None:
    await conn.execute(_TABLES)


async def _recall_search(conn: Conn) -> None:
    """Full-text search over signal exchanges (noise is never indexed: NULL vector)."""
    await conn.execute(_SEARCH)


async def _inbox_rejected_reason(conn: Conn) -> None:
    """Malformed input is kept as a `rejected` inbox row with its reason (for dedupe)."""
    await conn.execute("ALTER TABLE inbox ADD COLUMN reason TEXT")
    await conn.execute("DROP INDEX inbox_unfinished")
    await conn.execute(
        "CREATE INDEX inbox_unfinished ON inbox(session_key, id)"
        " WHERE status <> 'done' AND status <> 'rejected'"
    )


async def _debug_per_operator(conn: Conn) -> None:
    """Debug is per (key, operator); a flag set before names nobody, so it is cleared."""
    await conn.execute("ALTER TABLE sessions ADD COLUMN debug_users TEXT[] NOT NULL DEFAULT '{}'")
    await conn.execute("UPDATE sessions SET debug = FALSE")


async def _episode_carry_over(conn: Conn) -> None:
    """The identity facts an automatic reset carried into the episode (JSON pairs)."""
    await conn.execute("ALTER TABLE episodes ADD COLUMN carry_over TEXT")


async def _episode_previous_case(conn: Conn) -> None:
    """The case an automatic reset closed, kept with the episode it opened (JSON,
    `memory.store.codec`)."""
    await conn.execute("ALTER TABLE episodes ADD COLUMN previous_case TEXT")


async def _recall_index(conn: Conn) -> None:
    """Recall over the same Python terms as SQLite: a per-key `tsvector` side table with
    a GIN index, backfilled from the stored signal exchanges (`recall.py`)."""
    await recall.migrate(conn)


async def _usage(conn: Conn) -> None:
    """Provider-reported usage of each chat call and fold (`USAGE_TABLE`)."""
    await conn.execute(USAGE_TABLE)


async def _intake_function(conn: Conn) -> None:
    """A message's intake as one server-side call (`sql.INTAKE`)."""
    await conn.execute(INTAKE_FUNCTION)


async def _delivery_tombstones(conn: Conn) -> None:
    """The delivery ids `/forget` erased, hashed; the intake refuses a replay of one
    (`INTAKE_FUNCTION` is replaced with the version that checks them)."""
    await conn.execute(
        "CREATE TABLE erased_deliveries (digest TEXT PRIMARY KEY, erased_at TIMESTAMPTZ NOT NULL)"
    )
    await conn.execute(INTAKE_FUNCTION)


async def _lane_function(conn: Conn) -> None:
    """A chat-lock lane's batch (done marks, unlocks, locks, claims) as one server-side
    call (`sql.LANE`)."""
    await conn.execute(LANE_FUNCTION)


MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("0001_initial", _initial),
    ("0002_recall_search", _recall_search),
    ("0003_inbox_rejected_reason", _inbox_rejected_reason),
    ("0004_debug_per_operator", _debug_per_operator),
    ("0005_episode_carry_over", _episode_carry_over),
    ("0006_recall_index", _recall_index),
    ("0007_usage", _usage),
    ("0008_intake_function", _intake_function),
    ("0009_episode_previous_case", _episode_previous_case),
    ("0010_delivery_tombstones", _delivery_tombstones),
    ("0011_lane_function", _lane_function),
)


async def migrate(conn: Conn, steps: tuple[tuple[str, Migration], ...] = MIGRATIONS) -> list[str]:
    """Apply the missing migrations of `steps` (all, unless a test stops early) in
    order; the names applied now."""
    applied: list[str] = []
    threshold = conn.prepare_threshold
    conn.prepare_threshold = None  # scripts of several statements cannot be prepared
    try:
        await _migrate(conn, steps, applied)
    finally:
        conn.prepare_threshold = threshold
    return applied


async def _migrate(
    conn: Conn, steps: tuple[tuple[str, Migration], ...], applied: list[str]
) -> None:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL UNIQUE, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        cur = await conn.execute("SELECT name FROM schema_migrations")
        done = {row[0] if isinstance(row, tuple) else row["name"] for row in await cur.fetchall()}
        for name, step in steps:
            if name in done:
                continue
            await step(conn)
            # The order applied, not the position in `steps`: a step merged in between
            # ones a database already has gets the next number, never a taken one.
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) SELECT"
                " COALESCE(max(version), 0) + 1, %s FROM schema_migrations",
                (name,),
            )
            applied.append(name)
            log.info("migration_applied", name=name)
