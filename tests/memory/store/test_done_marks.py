"""A delivered entry's done mark survives a database hiccup and a read racing it
(`memory.store.inbox.DoneMarks`)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from memory.store import Store
from memory.store.inbox import DoneMarks

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _mark(fails: list[Exception], started: list[int]) -> asyncio.Future[None]:
    started.append(1)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    if fails:
        done.set_exception(fails.pop())
    else:
        done.set_result(None)
    return done


async def test_a_failed_mark_is_started_again_and_the_entry_reads_done_meanwhile() -> None:
    """Two failures, then it lands: three starts; the entry reads as done throughout (a
    redelivery is not answered), and `settled` waits for the retries too."""
    marks = DoneMarks(retry_s=(0.01, 0.01, 0.01))
    fails: list[Exception] = [OSError("disk full"), OSError("disk full")]
    started: list[int] = []
    marks.track(7, lambda: _mark(fails, started))
    assert 7 in marks
    await asyncio.sleep(0)
    assert 7 in marks  # failed once, waiting to try again: still done to readers
    await marks.settled()
    assert len(started) == 3
    assert 7 not in marks


async def test_a_mark_that_keeps_failing_gives_up_after_its_retries() -> None:
    """Bounded: after the last retry the failure is logged and the mark is dropped."""
    marks = DoneMarks(retry_s=(0.01, 0.01))
    fails: list[Exception] = [OSError("down")] * 10
    started: list[int] = []
    marks.track(8, lambda: _mark(fails, started))
    await marks.settled()
    assert len(started) == 3
    assert 8 not in marks


async def test_a_mark_that_commits_while_a_read_runs_still_reads_done(store: Store) -> None:
    """The read saw the row before the mark committed, and the mark finished before the
    read came back: the entry still reads as done (it did not, now and then, on
    PostgreSQL under load: 'answered', and a redelivery would have been answered again)."""
    a = await store.inbox_add("telegram:45", "m1", "u", "text", "hola", T0)
    assert a is not None
    await store.inbox_mark(a.id, "answered", ["hola!"], at=T0)
    inbox = store._inbox  # type: ignore[attr-defined]
    landed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    inbox.delivering.track(a.id, lambda: landed)  # a mark that writes nothing: rows stay stale
    reader = inbox.db.reader if hasattr(inbox.db, "reader") else inbox.db
    name = "execute_fetchall" if hasattr(inbox.db, "reader") else "all"
    original = getattr(reader, name)

    async def read_then_land(*args: object) -> object:
        rows = await original(*args)
        if not landed.done():
            landed.set_result(None)  # the mark commits while the read is on its way back
            await asyncio.sleep(0)
        return rows

    setattr(reader, name, read_then_land)
    try:
        got = await store.inbox_get("telegram:45", "m1")
    finally:
        setattr(reader, name, original)
    assert a.id not in inbox.delivering  # the mark had finished
    assert got is not None
    assert got.status == "done"
