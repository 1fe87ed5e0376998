"""Memory overhead: our full turn against openai-agents `SQLiteSession`, same run.

    python -m bench.overhead [--chats S] [--turns T] [--rounds R] [--quick]

A zero-latency chat model; S chats × T turns, each chat with messages of its own
(`messages`); each side on its own database file in a temporary directory. Ours is the
whole turn through `app.handler.handle` (durable inbox with dedupe, per-chat queue, topic
heuristic, window/pending/summary within budget, noise filter, exchange stored, inbox
marked done) plus the background fold-ins it triggers, drained inside the timed span.
Theirs, per turn: read the last 2N items, call the same fake model, append the user
message, append the reply.

Two schedules, both printed:
- one at a time: round-robin over the chats, each turn awaited before the next starts
  (the latency of a turn, end to end);
- concurrent: the S chats at once, each sending its next message when its reply
  arrives, as a bot serving S chats does (the throughput the process can sustain).

Rounds alternate theirs/ours; the median round of each is reported. Next to turns/s and
p50/p99, each side's CPU per turn (process time, every thread, over the timed span, plus
the fold worker process's time on folds, also shown apart): both sides are CPU-bound, so
this is what the throughput ratio follows.

Durability differs between the defaults: ours runs SQLite's WAL with `synchronous=NORMAL`
(a commit survives the process being killed; the WAL reaches the disk at checkpoints),
theirs with SQLite's default `FULL` (every commit waits for the disk). So, with `full`,
two comparisons at equal durability are measured in the same rounds: both FULL (ours with
`VENTANA_DB_SYNC=full`, on texts of its own) and both NORMAL (theirs with one PRAGMA more,
set where `SQLiteSession` configures each of its connections).
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.common import (
    FastChat,
    Target,
    bench_args,
    bench_settings,
    build_app,
    ms,
    percentile,
    ts,
)
from bench.data.transcripts import long_support
from bot.conversation.inbound import Inbound
from memory.fold.offload import ProcessFoldRunner
from memory.types import SessionKey
from providers.base import ChatRequest, Message

WINDOW = 6


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    turns: int
    wall_s: float
    per_turn_s: tuple[float, ...]
    cpu_s: float = 0.0  # the process's CPU time (every thread) over the timed span
    worker_cpu_s: float = 0.0  # of which the fold worker process's (folds off the loop)

    @property
    def rate(self) -> float:
        return self.turns / self.wall_s

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu_s / self.turns

    @property
    def p50(self) -> float:
        return percentile(self.per_turn_s, 50)

    @property
    def p99(self) -> float:
        return percentile(self.per_turn_s, 99)


@dataclass(frozen=True, slots=True)
class Result:
    chats: int
    turns: int
    schedule: str  # "one at a time" or "concurrent"
    ours: Run
    theirs: Run | None  # None when openai-agents is not installed
    ours_full: Run | None = None  # ours with VENTANA_DB_SYNC=full, when measured
    theirs_normal: Run | None = None  # theirs with synchronous=NORMAL, when measured

    @property
    def ratio(self) -> float | None:
        """Throughput ratio as each side comes out of the box (durability differs)."""
        return _ratio(self.ours, self.theirs)

    @property
    def full_ratio(self) -> float | None:
        """At equal durability: both wait for the disk at every commit."""
        return _ratio(self.ours_full, self.theirs)

    @property
    def normal_ratio(self) -> float | None:
        """At equal durability: neither waits for the disk at a commit."""
        return _ratio(self.ours, self.theirs_normal)


def _ratio(ours: Run | None, theirs: Run | None) -> float | None:
    return ours.rate / theirs.rate if ours is not None and theirs is not None else None


SCHEDULES = {"one at a time": False, "concurrent": True}


def messages(chats: int, turns: int, round_: int = 0) -> list[list[str]]:
    """Each chat's user messages: its own seeded support case, with its own order number
    and a customer reference, so no two chats send the same text, nor one round the
    texts of another (per-text caches get the hits real traffic would give them, not
    those of identical chats or of a rerun). Seeds start past the default one, which
    `bench.tokens` and `bench.growth` use earlier in the same `make bench` process."""
    out = []
    for s in range(chats):
        n = round_ * chats + s
        case = long_support(max(turns, 8), seed=48213 + 1 + n)
        order = f"{48213 + 7 * n}"
        out.append(
            [f"{t.user.replace('48213', order)} (cliente C{1000 + n})" for t in case[:turns]]
        )
    return out


Turn = Callable[[int, int], Awaitable[None]]  # (chat, turn number)
Texts = Sequence[Sequence[str]]  # each chat's messages


async def _schedule(turn: Turn, chats: int, turns: int, concurrent: bool) -> list[float]:
    """Run every (chat, turn) once in the given schedule; each turn's seconds."""
    times: list[float] = []

    async def timed(s: int, t: int) -> None:
        t0 = time.perf_counter()
        await turn(s, t)
        times.append(time.perf_counter() - t0)

    async def chat(s: int) -> None:
        for t in range(turns):
            await timed(s, t)

    if concurrent:
        await asyncio.gather(*(chat(s) for s in range(chats)))
    else:
        for t in range(turns):
            for s in range(chats):
                await timed(s, t)
    return times


async def _timed(
    turn: Turn, texts: Texts, concurrent: bool, settle: Callable[[], Awaitable[None]] | None = None
) -> tuple[list[float], float, float]:
    """Every (chat, turn) of `texts` once, then `settle`: each turn's seconds, and the wall
    and CPU seconds of it all."""
    started, cpu = time.perf_counter(), time.process_time()
    times = await _schedule(turn, len(texts), len(texts[0]), concurrent)
    if settle is not None:
        await settle()
    return times, time.perf_counter() - started, time.process_time() - cpu


async def run_ours(
    db: Path, texts: Texts, *, concurrent: bool = False, sync: str = "normal"
) -> Run:
    settings = bench_settings(db, window_exchanges=WINDOW, db_sync=sync)
    app = await build_app(settings, FastChat())
    if isinstance(app.folds.runner, ProcessFoldRunner):
        await app.folds.runner.start()  # its start-up is not a turn's

    async def turn(s: int, t: int) -> None:
        key = f"telegram:{1000 + s}"
        replies = await app.handler.handle(
            Inbound(SessionKey.parse(key), texts[s][t], f"u{t}", ts(t), key)
        )
        assert replies, "every turn gets a reply"

    try:
        times, wall, cpu = await _timed(turn, texts, concurrent, app.folds.drain)
    finally:
        await app.aclose()
    name = "ventana" if sync == "normal" else f"ventana, sync={sync}"
    worker = app.folds.runner.cpu_s
    return Run(name, len(times), wall, tuple(times), cpu + worker, worker)


def session_class(sync: str) -> Any:
    """`SQLiteSession` as it comes ("full", SQLite's default), or with `synchronous=NORMAL`
    set on each connection it opens ("normal"), counting the connections configured."""
    from agents.memory import SQLiteSession

    if sync == "full":
        return SQLiteSession
    if not hasattr(SQLiteSession, "_configure_connection"):
        return None  # an openai-agents that configures its connections elsewhere

    class NormalSyncSession(SQLiteSession):
        configured = 0

        @staticmethod
        def _configure_connection(conn: sqlite3.Connection) -> None:
            SQLiteSession._configure_connection(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            NormalSyncSession.configured += 1

    return NormalSyncSession


async def run_theirs(
    db: Path, texts: Texts, *, concurrent: bool = False, sync: str = "full"
) -> Run:
    model = FastChat()
    cls = session_class(sync)
    assert cls is not None, f"SQLiteSession cannot run with synchronous={sync}"
    sessions = [cls(f"telegram:{1000 + s}", db) for s in range(len(texts))]

    async def turn(s: int, t: int) -> None:
        session, text = sessions[s], texts[s][t]
        items = await session.get_items(limit=2 * WINDOW)
        history = tuple(Message(i["role"], str(i["content"])) for i in items)  # type: ignore[index,typeddict-item]
        reply = await model.complete(
            ChatRequest("system", (*history, Message("user", text)), 1024)
        )
        await session.add_items([{"role": "user", "content": text}])
        await session.add_items([{"role": "assistant", "content": reply.text}])

    try:
        times, wall, cpu = await _timed(turn, texts, concurrent)
    finally:
        for session in sessions:
            session.close()
    if sync == "full":
        return Run("agents.SQLiteSession", len(times), wall, tuple(times), cpu)
    if not cls.configured:  # the hook exists but is no longer what opens connections
        raise RuntimeError("SQLiteSession no longer calls _configure_connection")
    return Run(f"agents.SQLiteSession, {sync}", len(times), wall, tuple(times), cpu)


class Runner(Protocol):
    """`run_ours` or `run_theirs`: one timed run on a fresh database."""

    def __call__(
        self, db: Path, texts: Texts, *, concurrent: bool = False, sync: str = ...
    ) -> Awaitable[Run]: ...


def agents_available() -> bool:
    try:
        from agents.memory import SQLiteSession  # noqa: F401
    except ImportError:
        return False
    return True


async def measure(
    chats: int,
    turns: int,
    rounds: int,
    *,
    compare: bool = True,
    schedule: str = "one at a time",
    full: bool = False,
) -> Result:
    """Alternate theirs/ours `rounds` times on fresh databases; keep each one's median.
    With `full`, each round also runs both at the other durability (see the module doc)."""
    compare = compare and agents_available()
    normal_baseline = compare and full and session_class("normal") is not None
    concurrent = SCHEDULES[schedule]
    runs: dict[str, list[Run]] = {"ours": [], "theirs": [], "ours_full": [], "theirs_normal": []}
    with tempfile.TemporaryDirectory(prefix="ventana-bench-") as tmp:
        for r in range(rounds):
            # New texts every round and schedule, the same for both sides; the sync=full
            # runs get texts of their own too (ours would find these in its caches).
            texts = messages(chats, turns, r + (rounds if concurrent else 0))
            folder = Path(tmp) / str(r)
            folder.mkdir()
            plan: list[tuple[str, Runner, str, Texts, str]] = []
            if compare:
                plan.append(("theirs", run_theirs, "agents.db", texts, "full"))
            plan.append(("ours", run_ours, "ventana.db", texts, "normal"))
            if full:
                other = messages(chats, turns, r + (3 if concurrent else 2) * rounds)
                plan.append(("ours_full", run_ours, "ventana-full.db", other, "full"))
                if normal_baseline:
                    plan.append(("theirs_normal", run_theirs, "agents-normal.db", texts, "normal"))
            for slot, runner, db_name, chat_texts, sync in plan:
                run = await runner(folder / db_name, chat_texts, concurrent=concurrent, sync=sync)
                runs[slot].append(run)
    medians = {name: _median(got) if got else None for name, got in runs.items()}
    assert medians["ours"] is not None
    return Result(
        chats,
        turns,
        schedule,
        medians["ours"],
        medians["theirs"],
        medians["ours_full"],
        medians["theirs_normal"],
    )


def _median(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.rate)[len(runs) // 2]


def report(result: Result) -> list[Target]:
    print(
        f"== overhead, {result.schedule}: {result.chats} chats × {result.turns} turns, "
        f"zero-latency model, DB on disk, median of rounds"
    )
    runs = [
        result.ours,
        *filter(None, (result.ours_full, result.theirs, result.theirs_normal)),
    ]
    for run in runs:
        print(
            f"  {run.name:<30} {run.rate:8.1f} turns/s   p50 {ms(run.p50):>10}   "
            f"p99 {ms(run.p99):>10}   CPU/turn {ms(run.cpu_per_turn):>9}"
            + (f" (fold worker {ms(run.worker_cpu_s / run.turns)})" if run.worker_cpu_s else "")
        )
    if result.ratio is None:
        print("  openai-agents not installed: no baseline (pip install -e '.[bench]')")
        return []
    assert result.theirs is not None
    print(
        f"  throughput ratio ventana/agents, defaults = {result.ratio:.2f}×   p50 ratio "
        f"= {result.ours.p50 / result.theirs.p50:.2f}   p99 ratio = "
        f"{result.ours.p99 / result.theirs.p99:.2f}   CPU/turn ratio = "
        f"{result.ours.cpu_per_turn / result.theirs.cpu_per_turn:.2f}"
    )
    if result.full_ratio is not None:
        normal = f"{result.normal_ratio:.2f}×" if result.normal_ratio else "not measured"
        print(
            f"  at equal durability, throughput ratio: both FULL (ours VENTANA_DB_SYNC=full) "
            f"= {result.full_ratio:.2f}×   both NORMAL = {normal}"
        )
    return targets(result)


# Issue 29's bars: CPU per turn against SQLiteSession's, one at a time and concurrently;
# throughput at equal durability one at a time (the lower of both FULL and both NORMAL).
CPU_RATIO = {"one at a time": 1.5, "concurrent": 1.2}
EQUAL_DURABILITY_THROUGHPUT = 0.67


def targets(result: Result) -> list[Target]:
    """The run's targets: throughput at defaults, CPU per turn, and (one at a time)
    throughput at equal durability when both arms of it were measured."""
    assert result.ratio is not None
    assert result.theirs is not None
    schedule = result.schedule
    cpu = result.ours.cpu_per_turn / result.theirs.cpu_per_turn
    out = [
        Target("overhead", f"turns/s ÷ SQLiteSession, {schedule}", result.ratio, 2.0, "high",
               f"{result.ratio:.2f}×"),
        Target("overhead", f"CPU/turn ÷ SQLiteSession's, {schedule}", cpu,
               CPU_RATIO.get(schedule, 1.5), "low", f"{cpu:.2f}×"),
    ]  # fmt: skip
    equal = [r for r in (result.full_ratio, result.normal_ratio) if r is not None]
    if schedule == "one at a time" and equal:
        worst = min(equal)
        name = "turns/s ÷ SQLiteSession at equal durability, one at a time"
        out.append(Target("overhead", name, worst, EQUAL_DURABILITY_THROUGHPUT, "high",
                          f"{worst:.2f}×"))  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> list[Target]:
    args = bench_args(
        __doc__,
        argv,
        {"chats": 20, "turns": 40, "rounds": 3},
        quick={"chats": 4, "turns": 10, "rounds": 1},
        quick_help="4 chats × 10 turns, 1 round",
    )
    targets: list[Target] = []
    for schedule in SCHEDULES:
        targets += report(
            asyncio.run(measure(args.chats, args.turns, args.rounds, schedule=schedule, full=True))
        )
    return targets


if __name__ == "__main__":
    main()
