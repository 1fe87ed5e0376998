"""Forget while a reader holds an old snapshot: does another chat wait?

    python -m bench.forget_reader

A plain `sqlite3` connection holds a read snapshot (`BEGIN; SELECT …`, like an open
`inspect` or shell). Key A is forgotten and, at the same time, chat B makes a message
durable (`begin_turn`). Figure: B's latency with today's forget (a non-blocking TRUNCATE
checkpoint off the writer, retried in the background). Baseline, same run, same database
shape: B's latency when the TRUNCATE checkpoint runs on the writer under the busy timeout
(the previous forget), which holds the writer until the timeout expires.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from memory.store.sqlite import operator
from memory.store.sqlite.store import SQLiteStore
from memory.types import InboxEntry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def _run(path: Path, *, old: bool) -> tuple[float, bool]:
    store = await SQLiteStore.open(path)
    try:
        for i in range(50):
            await store.begin_turn(
                InboxEntry(0, "whatsapp:1", f"m{i}", "whatsapp:1", "text", f"x{i}", T0), 6
            )
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM inbox").fetchall()
        if old:
            await store.db.atomic(partial(_delete, key="whatsapp:1"))
            wipe = asyncio.ensure_future(
                store.db.exclusive(
                    partial(operator.one_value, sql="PRAGMA wal_checkpoint(TRUNCATE)")
                )
            )
        else:
            wipe = asyncio.ensure_future(store.forget("whatsapp:1"))
        await asyncio.sleep(0.01)  # the wipe is under way
        started = time.perf_counter()
        await store.begin_turn(
            InboxEntry(0, "whatsapp:2", "o", "whatsapp:2", "text", "hola", T0), 6
        )
        took = time.perf_counter() - started
        await wipe
        erased = await store.erased()
        reader.execute("ROLLBACK")
        reader.close()
        return took, erased
    finally:
        await store.close()


def _delete(db: sqlite3.Connection, *, key: str) -> int:
    return int(db.execute("DELETE FROM inbox WHERE session_key = ?", (key,)).rowcount)


def main(argv: list[str] | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        new, erased = asyncio.run(_run(Path(tmp) / "new.db", old=False))
        old, _ = asyncio.run(_run(Path(tmp) / "old.db", old=True))
    print("== forget with a reader holding a snapshot: another chat's intake")
    print(f"  now (non-blocking, background):  {new * 1000:8.1f} ms  erased claimed: {erased}")
    print(f"  baseline (TRUNCATE on writer):   {old * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
