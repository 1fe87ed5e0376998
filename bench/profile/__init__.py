"""Where a turn's CPU goes: `bench.overhead`'s turns sampled by py-spy, by sub-domain.

    python -m bench.profile [--chats S] [--turns T] [--rate HZ] [--out DIR] [--quick]

Each schedule of `bench.overhead` (one at a time, then the S chats concurrently) runs in a
child process under `py-spy record --format raw --subprocesses` (every thread: the event
loop, SQLite's threads, and the fold worker process's; idle threads are not sampled).
Each sample is charged to the innermost frame of ours, mapped to its owner by path
(`OWNERS`, first match wins): intake, store, recall, facts, topic, text, fold, render,
engine, providers, channels; a sample with no frame of ours (the interpreter between
tasks, asyncio's own loop) counts as `runtime`. The bench harness (the fake model, the
schedule) is `bench`.

Printed per schedule: the share of samples of each owner and its CPU per turn (the share
times the child's measured CPU per turn), next to the whole turn's CPU per turn and
`SQLiteSession`'s doing the same turns in the same child (the baseline), so each figure
reads against the peer. The raw collapsed stacks are kept in `--out` (default: a temporary
folder, printed) for flamegraph.pl or speedscope.app.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import Target, ms, quiet_logs, ts
from bot.conversation.inbound import Inbound
from memory.fold.offload import ProcessFoldRunner
from memory.types import SessionKey

# (path prefix, owner): the innermost frame of ours decides; the first prefix that
# matches wins, so a backend's recall index counts as recall, not store.
OWNERS: tuple[tuple[str, str], ...] = (
    ("memory/store/sqlite/recall", "recall"),
    ("memory/store/postgres/recall", "recall"),
    ("memory/recall/", "recall"),
    ("memory/store/", "store"),
    ("memory/facts/", "facts"),
    ("memory/fold/", "fold"),
    ("memory/topic/", "topic"),
    ("memory/text/", "text"),
    ("memory/policy", "render"),
    ("memory/blocks", "render"),
    ("memory/tokens", "render"),
    ("memory/carry_over", "render"),
    ("memory/noise", "engine"),
    ("memory/", "engine"),
    ("bot/conversation/", "intake"),
    ("bot/channels/", "channels"),
    ("bot/", "intake"),
    ("providers/", "providers"),
    ("bench/", "bench"),
)
ORDER = (
    "intake",
    "store",
    "facts",
    "topic",
    "text",
    "recall",
    "fold",
    "render",
    "engine",
    "providers",
    "channels",
    "bench",
    "runtime",
)
REPO = Path(__file__).resolve().parents[2]
SCHEDULES = {"one at a time": "one", "concurrent": "concurrent"}


def owner_of(frame: str) -> str | None:
    """The owner of one collapsed-stack frame (`func (path/to/file.py:12)`), or None
    when the frame is not ours."""
    start, end = frame.rfind("("), frame.rfind(":")
    if start < 0 or end < start:
        return None
    path = frame[start + 1 : end].replace("\\", "/")
    root = str(REPO).replace("\\", "/") + "/"
    if path.startswith(root):
        path = path[len(root) :]
    elif "site-packages/" in path or path.startswith("<"):
        return None
    for prefix, owner in OWNERS:
        if path.startswith(prefix):
            return owner
    return None


def charge(stack: str) -> str:
    """The owner a sample is charged to: its innermost frame of ours."""
    for frame in reversed(stack.split(";")):
        owner = owner_of(frame)
        if owner is not None:
            return owner
    return "runtime"


# Innermost frames of a thread waiting (aiosqlite's and the executor's workers on their
# queues, the event loop in its selector, a thread on a condition, the fold worker for
# its next job), which py-spy cannot always tell from running: not CPU, so not counted.
# The selector's `select` is `_PollLikeSelector.select` in the frames of Python 3.11's
# epoll loop; missing it charged about a tenth of every sample to `runtime`.
WAITING = (
    "_connection_worker_thread (",
    "_worker (",
    "EpollSelector.select (",
    "_PollLikeSelector.select (",
    "select (",
    "Condition.wait (",
    "Queue.get (",
    "Connection._recv (",
)


def tally(lines: Iterable[str]) -> Counter[str]:
    """Samples per owner from py-spy's raw format (`frame;frame;frame count`)."""
    counts: Counter[str] = Counter()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if stack.rpartition(";")[2].startswith(WAITING):
            continue
        if stack and count.isdigit():
            counts[charge(stack)] += int(count)
    return counts


@dataclass(frozen=True, slots=True)
class Profiled:
    schedule: str
    turns: int
    cpu_per_turn: float  # ours, measured in the child around its timed span
    baseline_cpu_per_turn: float | None  # SQLiteSession on the same turns
    samples: Counter[str]

    def share(self, owner: str) -> float:
        total = sum(self.samples.values())
        return self.samples[owner] / total if total else 0.0


def _child(schedule: str, chats: int, turns: int) -> None:
    """In the profiled process: SQLiteSession's turns, then ours built and warmed; "ready"
    on stdout, then (once the sampler is attached and says go on stdin) our timed turns;
    the figures as JSON, and out at once, so nothing after the span is sampled."""
    from bench import overhead
    from bench.common import FastChat, bench_settings, build_app

    quiet_logs()
    concurrent = schedule == "concurrent"
    texts = overhead.messages(chats, turns, 7)
    tmp = Path(tempfile.mkdtemp(prefix="ventana-profile-"))
    theirs = None
    if overhead.agents_available():
        run = asyncio.run(overhead.run_theirs(tmp / "a.db", texts, concurrent=concurrent))
        theirs = run.cpu_per_turn

    async def ours() -> tuple[int, float]:
        settings = bench_settings(tmp / "v.db", window_exchanges=overhead.WINDOW)
        app = await build_app(settings, FastChat())
        if isinstance(app.folds.runner, ProcessFoldRunner):
            await app.folds.runner.start()  # started before the span, sampled within it

        async def turn(s: int, t: int) -> None:
            key = f"telegram:{1000 + s}"
            inbound = Inbound(SessionKey.parse(key), texts[s][t], f"u{t}", ts(t), key)
            assert await app.handler.handle(inbound), "every turn gets a reply"

        print("ready", flush=True)
        sys.stdin.readline()
        times, _wall, cpu = await overhead._timed(turn, texts, concurrent, app.folds.drain)
        cpu_per_turn = (cpu + app.folds.runner.cpu_s) / len(times)
        print(json.dumps({"turns": len(times), "cpu": cpu_per_turn, "theirs": theirs}), flush=True)
        # The teardown (the fold worker's pool) waits until the sampler is gone.
        await asyncio.to_thread(sys.stdin.readline)
        await app.aclose()

    asyncio.run(ours())


def spy_path() -> str:
    """py-spy beside this interpreter (the bench extra installs it there), or on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy") or str(beside)


def profile(schedule: str, chats: int, turns: int, rate: int, out: Path) -> Profiled:
    """Run one schedule in a child, py-spy attached for its timed span only; the samples
    charged to their owners."""
    spy = spy_path()
    if not Path(spy).exists():
        raise SystemExit("bench.profile needs py-spy: pip install -e '.[bench]'")
    raw = out / f"{SCHEDULES[schedule]}.txt"
    child = [sys.executable, "-m", "bench.profile", "--child", SCHEDULES[schedule]]
    child += ["--chats", str(chats), "--turns", str(turns)]
    with subprocess.Popen(
        child, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit("bench.profile: the profiled run failed before its turns")
        command = [spy, "record", "--format", "raw", "--full-filenames", "-r", str(rate)]
        command += ["--subprocesses"]  # the fold worker's samples (VENTANA_FOLD_WORKERS)
        command += ["-o", str(raw)]
        spied = subprocess.Popen(
            [*command, "--pid", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # let the sampler attach before the span starts
        proc.stdin.write("go\n")
        proc.stdin.flush()
        figures = None
        for line in proc.stdout:  # the span's figures, once its turns are done
            figures = _last_json(line)
            if figures is not None:
                break
        spied.send_signal(signal.SIGINT)  # py-spy writes what it sampled and stops
        _, spy_err = spied.communicate(timeout=60)
        proc.stdin.write("done\n")  # then the child tears down, unsampled
        proc.stdin.flush()
        proc.stdout.read()
    if figures is None or not raw.exists():
        raise SystemExit(f"bench.profile: the profiled run failed:\n{spy_err[-2000:]}")
    with raw.open(encoding="utf-8") as lines:
        samples = tally(lines)
    return Profiled(schedule, int(figures["turns"]), figures["cpu"], figures["theirs"], samples)


def _last_json(stdout: str) -> dict[str, float] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            parsed: dict[str, float] = json.loads(line)
            return parsed
    return None


def report(result: Profiled) -> list[Target]:
    base = result.baseline_cpu_per_turn
    peer = f", SQLiteSession {ms(base)} (×{result.cpu_per_turn / base:.2f})" if base else ""
    print(
        f"== profile, {result.schedule}: {result.turns} turns, CPU per turn "
        f"{ms(result.cpu_per_turn)}{peer}; {sum(result.samples.values())} samples"
    )
    for owner in ORDER:
        share = result.share(owner)
        if share:
            cost = share * result.cpu_per_turn
            print(f"  {owner:<10} {share:6.1%}   {ms(cost):>9} a turn")
    return []


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chats", type=int)
    parser.add_argument("--turns", type=int)
    parser.add_argument("--rate", type=int, default=250, help="samples a second")
    parser.add_argument("--out", type=Path, help="where the raw stacks go")
    parser.add_argument("--quick", action="store_true", help="4 chats × 10 turns")
    parser.add_argument("--child", choices=sorted(SCHEDULES.values()), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    chats = args.chats or (4 if args.quick else 20)
    turns = args.turns or (10 if args.quick else 40)
    if args.child:
        _child(args.child, chats, turns)
        return []
    out = args.out or Path(tempfile.mkdtemp(prefix="ventana-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    targets: list[Target] = []
    for schedule in SCHEDULES:
        targets += report(profile(schedule, chats, turns, args.rate, out))
    print(f"  raw stacks (flamegraph.pl, speedscope.app): {out}")
    return targets
