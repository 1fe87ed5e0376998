"""The schema: ordered, named migrations, recorded in `schema_migrations`, applied at start.

Each migration is a function over a raw connection, registered in order by `@migration`
and recorded under `NNNN_<function name>`; it runs in the transaction that records it.
A new table (a search index, say) is a new function at the end of the list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from memory.store.sqlite import recall_index as recall_index_tables
from memory.store.sqlite.connection import in_transaction

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []
# Provider-reported usage of every chat call and fold, written with the exchange or the
# summary version it paid for (`turns.insert_exchange`, `summaries.write_summary`);
# rows hang off the session, so forget erases them with it.
USAGE_TABLE = """
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        purpose TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        exchange_id INTEGER REFERENCES exchanges(id) ON DELETE CASCADE,
        summary_id INTEGER REFERENCES summaries(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL
    );
    CREATE INDEX usage_by_session ON usage(session_id, created_at);
    CREATE INDEX usage_by_time ON usage(created_at)
"""


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((f"{len(MIGRATIONS) + 1:04d}_{fn.__name__}", fn))
    return fn


def _script(db: sqlite3.Connection, sql: str) -> None:
    for statement in filter(str.strip, sql.split(";")):
        db.execute(statement)


@migration
def initial(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            last_activity_at TEXT,
            debug INTEGER NOT NULL DEFAULT 0,
            current_episode_id INTEGER
        );
        CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            started_at TEXT NOT NULL,
            closed_at TEXT,
            close_reason TEXT,
            opened_by TEXT,
            reset_signals TEXT
        );
        CREATE INDEX episodes_by_session ON episodes(session_id, id);
        CREATE TABLE exchanges (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            external_id TEXT,
            user_text TEXT NOT NULL,
            reply_text TEXT NOT NULL,
            signal INTEGER NOT NULL,
            noise_reason TEXT,
            stop_reason TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            reply_tokens INTEGER NOT NULL DEFAULT 0,
            topic TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, external_id)
        );
        CREATE INDEX exchanges_window ON exchanges(episode_id, signal, id);
        CREATE INDEX exchanges_by_session ON exchanges(session_id, id);
        CREATE TABLE summaries (
            id INTEGER PRIMARY KEY,
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            text TEXT NOT NULL,
            checkpoint INTEGER NOT NULL,
            prompt_version TEXT NOT NULL,
            model TEXT NOT NULL,
            source_from INTEGER NOT NULL,
            source_to INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            round INTEGER NOT NULL DEFAULT 1,
            dropped_facts TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (episode_id, version)
        );
        CREATE TABLE inbox (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL,
            external_id TEXT NOT NULL,
            user_ref TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            received_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            replies TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            UNIQUE (session_key, external_id)
        );
        CREATE INDEX inbox_unfinished ON inbox(status, id) WHERE status != 'done';
        CREATE INDEX inbox_by_age ON inbox(updated_at) WHERE status = 'done';
        """,
    )


@migration
def episode_reopened_at(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE episodes ADD COLUMN reopened_at TEXT")


@migration
def inbox_rejected_reason(db: sqlite3.Connection) -> None:
    """Malformed input is kept as a `rejected` inbox row with its reason (for dedupe)."""
    db.execute("ALTER TABLE inbox ADD COLUMN reason TEXT")


@migration
def debug_per_operator(db: sqlite3.Connection) -> None:
    """Debug is per (key, operator): the operators who switched it on, as a JSON list. A
    flag set before this migration names nobody, so it is cleared (a dry run for whom?)."""
    db.execute("ALTER TABLE sessions ADD COLUMN debug_users TEXT")
    db.execute("UPDATE sessions SET debug = 0")


@migration
def usage(db: sqlite3.Connection) -> None:
    """Provider-reported usage of each chat call and fold (`USAGE_TABLE`)."""
    _script(db, USAGE_TABLE)


@migration
def recall_index(db: sqlite3.Connection) -> None:
    """The FTS5 recall shards (`recall_index`); filled on open by its backfill."""
    recall_index_tables.create_tables(db)


@migration
def episode_carry_over(db: sqlite3.Connection) -> None:
    """The identity facts an automatic reset carried into the episode (JSON pairs)."""
    db.execute("ALTER TABLE episodes ADD COLUMN carry_over TEXT")


@migration
def recall_crisis_merge(db: sqlite3.Connection) -> None:
    """Recall shards merge a level at 4 segments, not FTS5's 16 (`recall_index.tune`)."""
    recall_index_tables.tune(db)


def _apply(db: sqlite3.Connection, number: int, name: str, apply: Migration) -> None:
    apply(db)
    at = datetime.now(UTC).isoformat()
    db.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (number, name, at))


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply what is not applied yet, each in its own transaction; the names applied."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
    applied = []
    for number, (name, apply) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        in_transaction(db, partial(_apply, db, number, name, apply))
        applied.append(name)
    return applied
