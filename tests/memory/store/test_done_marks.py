"""A delivered entry's done mark survives a database hiccup (`memory.store.inbox.DoneMarks`)."""

from __future__ import annotations

import asyncio

from memory.store.inbox import DoneMarks


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
