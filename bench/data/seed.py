"""Seed a ventana database fast, straight through sqlite3 (one transaction, executemany).

The schema comes from the store's own migrations (`SQLiteStore.open`), so the seeded
file is exactly what the bot opens. Every session gets one open episode, its exchanges
(all signal), their inbox entries (done), and — when it has more exchanges than the
window — one summary version whose checkpoint leaves `pending` exchanges unfolded, as a
bot whose folds keep up would have.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from bench.common import T0
from memory.fold.extractive import ExtractiveSummarizer
from memory.store.sqlite.store import SQLiteStore

_USER = "Hola, sigo con el pedido #PED-{s}-{i}: ¿me confirmáis la entrega del {d} de mayo?"
_REPLY = "Confirmado: el pedido #PED-{s}-{i} se entrega el {d} de mayo entre las 9:00 y las 14:00."


@dataclass(frozen=True, slots=True)
class SeedSession:
    key: str
    exchanges: int
    window: int = 6
    pending: int = 0  # signal exchanges left after the checkpoint, before the window
    summarize: bool = True
    prompt_version: str = ExtractiveSummarizer.prompt_version  # the offline summarizer's
    # (user, reply) pairs said in turn from `offset` on (wrapping); empty: a templated
    # delivery question with the session's own order number
    turns: tuple[tuple[str, str], ...] = ()
    offset: int = 0
    mark: str = ""  # appended to each user text: two databases then share no text


def create_schema(path: Path) -> None:
    """Run the store's migrations on `path` (in a thread: callers may be inside a loop)."""

    async def run() -> None:
        store = await SQLiteStore.open(path)
        await store.close()

    worker = threading.Thread(target=lambda: asyncio.run(run()))
    worker.start()
    worker.join()


def seed(
    path: Path, sessions: Sequence[SeedSession], *, batch: int = 50_000, progress: str = ""
) -> int:
    """Write `sessions` into the database at `path`; returns the number of exchanges.
    With `progress` (a name), a line on stderr every few seconds says how far it got."""
    create_schema(path)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("PRAGMA cache_size = -262144")  # 256 MB: the indexes' pages stay hot
        db.execute("BEGIN")
        total, shown = 0, time.monotonic()
        goal = sum(s.exchanges for s in sessions)
        for sid, session in enumerate(sessions, start=1):
            total += _seed_session(db, sid, session, batch)
            if progress and (time.monotonic() - shown > 5 or total == goal):
                shown = time.monotonic()
                print(f"  seeding {progress}: {total:,} / {goal:,} exchanges", file=sys.stderr)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("ANALYZE")
    finally:
        db.close()
    return total


def _seed_session(db: sqlite3.Connection, sid: int, session: SeedSession, batch: int) -> int:
    at = T0.isoformat()
    db.execute(
        "INSERT INTO sessions (id, key, created_at, last_activity_at) VALUES (?, ?, ?, ?)",
        (sid, session.key, at, at),
    )
    episode = db.execute(
        "INSERT INTO episodes (session_id, started_at) VALUES (?, ?)", (sid, at)
    ).lastrowid
    db.execute("UPDATE sessions SET current_episode_id = ? WHERE id = ?", (episode, sid))
    rows = _rows(sid, episode, session)
    while True:
        chunk = [next(rows, None) for _ in range(batch)]
        chunk = [row for row in chunk if row is not None]
        if not chunk:
            break
        db.executemany(
            "INSERT INTO exchanges (session_id, episode_id, external_id, user_text, reply_text,"
            " signal, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)",
            [row[:6] for row in chunk],
        )
        db.executemany(
            "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
            " status, attempts, updated_at) VALUES (?, ?, ?, 'text', ?, ?, 'done', 1, ?)",
            [(session.key, row[2], session.key, row[3], row[5], row[5]) for row in chunk],
        )
    first, last = db.execute(
        "SELECT MIN(id), MAX(id) FROM exchanges WHERE episode_id = ?", (episode,)
    ).fetchone()
    folded = session.exchanges - session.window - session.pending
    if session.summarize and folded > 0 and first is not None and last is not None:
        checkpoint = first + folded - 1
        db.execute(
            "INSERT INTO summaries (episode_id, version, text, checkpoint, prompt_version,"
            " model, source_from, source_to, input_tokens, output_tokens, round, created_at)"
            " VALUES (?, 1, ?, ?, ?, 'seed', ?, ?, 0, 0, 1, ?)",
            (
                episode,
                _summary(session.key),
                checkpoint,
                session.prompt_version,
                first,
                checkpoint,
                at,
            ),
        )
    return session.exchanges


def _rows(sid: int, episode: int, session: SeedSession) -> Iterator[tuple[object, ...]]:
    turns = session.turns
    for i in range(session.exchanges):
        at = (T0 + timedelta(seconds=i)).isoformat()
        if turns:
            user, reply = turns[(session.offset + i) % len(turns)]
            user = f"{user} {session.mark}" if session.mark else user
        else:
            day = 1 + i % 28
            user, reply = _USER.format(s=sid, i=i, d=day), _REPLY.format(s=sid, i=i, d=day)
        yield sid, episode, f"seed-{i}", user, reply, at


def _summary(key: str) -> str:
    return (
        f"Resumen de {key}: el cliente consulta entregas de sus pedidos; se confirmaron "
        "las fechas y franjas horarias. Pendiente: confirmar la última entrega."
    )
