"""bench.profile: samples charged to the owner of their innermost frame of ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import profile

ROOT = str(profile.REPO)
LOOP = "run (/usr/lib/python3.11/asyncio/runners.py:190);Handle._run (/x/asyncio/events.py:80)"


def frame(name: str, path: str, line: int = 1) -> str:
    return f"{name} ({ROOT}/{path}:{line})"


@pytest.mark.parametrize(
    ("path", "owner"),
    [
        ("memory/store/sqlite/recall_index.py", "recall"),
        ("memory/store/sqlite/turns.py", "store"),
        ("memory/fold/guard.py", "fold"),
        ("memory/facts/extract.py", "facts"),
        ("memory/fold/extractive.py", "fold"),
        ("memory/topic/heuristic.py", "topic"),
        ("memory/text/stem.py", "text"),
        ("memory/policy.py", "render"),
        ("memory/engine.py", "engine"),
        ("bot/conversation/handler.py", "intake"),
        ("providers/offline.py", "providers"),
    ],
)
def test_a_frame_of_ours_is_owned_by_its_path(path: str, owner: str) -> None:
    """The first matching prefix wins: a backend's recall index is recall, not store."""
    assert profile.owner_of(frame("f", path)) == owner


def test_library_frames_are_nobodys() -> None:
    """Frames outside the checkout (stdlib, site-packages, frozen) have no owner."""
    assert profile.owner_of("get (/usr/lib/python3.11/queue.py:180)") is None
    assert profile.owner_of(f"x ({ROOT}/.venv/lib/site-packages/re.py:3)") is None
    assert profile.owner_of("_run_code (<frozen runpy>:88)") is None


def test_a_sample_goes_to_its_innermost_frame_of_ours() -> None:
    """Library time below our frame (sqlite3, re) is charged to the caller of ours."""
    stack = ";".join(
        [
            LOOP,
            frame("handle", "bot/conversation/handler.py"),
            frame("record", "memory/engine.py"),
            frame("insert_exchange", "memory/store/sqlite/writes.py"),
            "execute (/usr/lib/python3.11/sqlite3/dbapi2.py:9)",
        ]
    )
    assert profile.charge(stack) == "store"
    assert profile.charge(LOOP) == "runtime"


def test_tally_counts_samples_and_leaves_waiting_threads_out() -> None:
    """Counts add up per owner; a worker waiting on its queue is not CPU."""
    lines = [
        f"{LOOP};{frame('decide', 'memory/topic/decide.py')} 3\n",
        f"{LOOP};{frame('decide', 'memory/topic/decide.py', 9)} 2\n",
        "Thread.run (/t.py:1);_connection_worker_thread (/a/aiosqlite/core.py:59) 40\n",
        f"{LOOP};EpollSelector.select (/usr/lib/python3.11/selectors.py:468) 7\n",
        f"{LOOP} 1\n",
    ]
    assert profile.tally(lines) == {"topic": 5, "runtime": 1}


def test_profile_runs_both_schedules_and_charges_our_owners(tmp_path: Path) -> None:
    """A tiny real run: samples are taken in the turns' span and most land on owners of ours."""
    result = profile.profile("one at a time", 2, 4, 500, tmp_path)
    assert result.turns == 8
    assert result.cpu_per_turn > 0
    assert (tmp_path / "one.txt").exists()
    ours = sum(n for owner, n in result.samples.items() if owner not in ("runtime", "bench"))
    assert ours > 0
