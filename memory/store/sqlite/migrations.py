"""Ordered, named schema migrations, recorded in `schema_migrations` and applied at start."""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_initial",
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
    ),
    (
        "0002_episode_reopened_at",
        """
        ALTER TABLE episodes ADD COLUMN reopened_at TEXT;
        """,
    ),
    (
        "0003_inbox_rejected_reason",
        """
        ALTER TABLE inbox ADD COLUMN reason TEXT;
        """,
    ),
)
