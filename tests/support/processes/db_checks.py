"""Invariants read straight from the SQLite file with the standard library (bot stopped)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from pathlib import Path


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=5)


def integrity(db: sqlite3.Connection) -> str:
    return ", ".join(str(row[0]) for row in db.execute("PRAGMA integrity_check"))


def check_store(
    path: Path, confirmed: Iterable[int], texts: Mapping[int, tuple[int, str]]
) -> dict[str, int]:
    """Assert the crash invariants; return a few counts for the report."""
    with closing(connect(path)) as db:
        assert integrity(db) == "ok"
        inbox = {
            (key, ext): status
            for key, ext, status in db.execute(
                "SELECT session_key, external_id, status FROM inbox"
            )
        }
        exchanges = db.execute(
            "SELECT x.id, s.key, x.external_id, x.user_text, x.episode_id FROM exchanges x"
            " JOIN sessions s ON s.id = x.session_id ORDER BY x.id"
        ).fetchall()
        for update_id in confirmed:  # acknowledged to Telegram: never lost
            chat_id, _ = texts[update_id]
            assert (f"telegram:{chat_id}", str(update_id)) in inbox, f"lost update {update_id}"
        seen: set[tuple[str, str]] = set()
        for _id, key, ext, user_text, _episode in exchanges:
            assert ext is not None, f"exchange without external id: {user_text[:40]!r}"
            assert (key, ext) not in seen, f"duplicated exchange for update {ext}"
            seen.add((key, ext))
            assert (key, ext) in inbox, f"exchange {ext} has no inbox entry"
            assert texts[int(ext)] == (int(key.split(":")[1]), user_text), "text changed"
        _check_order(exchanges)
        _check_summaries(db)
        return {"inbox": len(inbox), "exchanges": len(exchanges)}


def _check_order(exchanges: list[tuple[int, str, str, str, int]]) -> None:
    """Per chat, exchanges are stored in the order Telegram numbered the updates."""
    last: dict[str, int] = {}
    for _id, key, ext, _text, _episode in exchanges:
        assert int(ext) > last.get(key, 0), f"{key}: update {ext} handled out of order"
        last[key] = int(ext)


def _check_summaries(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT m.episode_id, m.version, m.checkpoint, m.source_to,"
        " (SELECT MAX(x.id) FROM exchanges x WHERE x.episode_id = m.episode_id)"
        " FROM summaries m ORDER BY m.episode_id, m.version"
    ).fetchall()
    expected: dict[int, int] = {}
    for episode, version, checkpoint, source_to, last_stored in rows:
        assert last_stored is not None, f"episode {episode} has a summary and no exchange"
        assert checkpoint <= last_stored, (
            f"episode {episode} v{version}: checkpoint {checkpoint} passes {last_stored}"
        )
        assert source_to <= checkpoint
        expected[episode] = expected.get(episode, 0) + 1
        assert version == expected[episode], f"episode {episode}: version gap at {version}"


def summary_versions(path: Path) -> int:
    with closing(connect(path)) as db:
        return int(db.execute("SELECT COUNT(*) FROM summaries").fetchone()[0])


def inbox_statuses(path: Path) -> dict[str, int]:
    with closing(connect(path)) as db:
        return dict(db.execute("SELECT status, COUNT(*) FROM inbox GROUP BY status").fetchall())
