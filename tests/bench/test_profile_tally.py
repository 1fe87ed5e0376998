"""bench.profile charges a sample to the innermost frame of ours and leaves out threads
that only wait (a selector, a condition, a worker on its queue)."""

from __future__ import annotations

from bench.profile import REPO, tally

OURS = f"recall_terms ({REPO}/memory/recall/related.py:80)"
LOOP = "run_forever (/usr/lib/python3.11/asyncio/base_events.py:607)"


def test_waiting_threads_are_not_cpu_and_ours_are_charged_to_their_owner() -> None:
    """The event loop in `_PollLikeSelector.select`, a thread in `Condition.wait` and the
    fold worker in `Queue.get` count nothing; a sample inside memory/recall counts to
    recall, one with no frame of ours to runtime."""
    lines = [
        f"{LOOP};_PollLikeSelector.select (/usr/lib/python3.11/selectors.py:415) 54\n",
        "Thread.run (threading.py:982);Condition.wait (/usr/lib/python3.11/threading.py:327) 35\n",
        "main (x.py:1);Queue.get (/usr/lib/python3.11/multiprocessing/queues.py:122) 6\n",
        f"{LOOP};{OURS} 7\n",
        f"{LOOP};_write_to_self (/usr/lib/python3.11/asyncio/selector_events.py:139) 3\n",
    ]
    assert tally(lines) == {"recall": 7, "runtime": 3}
