"""Memory overhead: our full turn against openai-agents `SQLiteSession`, same run.

    python -m bench.overhead [--chats S] [--turns T] [--rounds R] [--quick]

A zero-latency chat model; S chats × T turns interleaved (round-robin, each turn
awaited); each side on its own database file in a temporary directory. Ours is the whole
turn through `app.handler.handle` (durable inbox with dedupe, per-chat queue, topic
heuristic, window/pending/summary within budget, noise filter, exchange stored, inbox
marked done) plus the background fold-ins it triggers, drained inside the timed span.
Theirs, per turn: read the last 2N items, call the same fake model, append the user
message, append the reply. Rounds alternate theirs/ours; the median round is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.inbound import Inbound
from providers.base import ChatRequest, Message

from .common import FastChat, Target, bench_settings, build_app, ms, percentile, quiet_logs, ts
from .transcripts import long_support

WINDOW = 6


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    turns: int
    wall_s: float
    per_turn_s: tuple[float, ...]

    @property
    def rate(self) -> float:
        return self.turns / self.wall_s

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
    ours: Run
    theirs: Run | None  # None when openai-agents is not installed

    @property
    def ratio(self) -> float | None:
        return self.ours.rate / self.theirs.rate if self.theirs else None


def messages(turns: int) -> list[str]:
    return [turn.user for turn in long_support(max(turns, 8))]


async def run_ours(db: Path, chats: int, turns: int, texts: Sequence[str]) -> Run:
    app = await build_app(bench_settings(db, window_exchanges=WINDOW), FastChat())
    times: list[float] = []
    try:
        started = time.perf_counter()
        for t in range(turns):
            for s in range(chats):
                key = f"telegram:{1000 + s}"
                inbound = Inbound(key, texts[t % len(texts)], f"u{t}", ts(t), key)
                t0 = time.perf_counter()
                replies = await app.handler.handle(inbound)
                times.append(time.perf_counter() - t0)
                assert replies, "every turn gets a reply"
        await app.folds.drain()
        wall = time.perf_counter() - started
    finally:
        await app.aclose()
    return Run("ventana", chats * turns, wall, tuple(times))


async def run_theirs(db: Path, chats: int, turns: int, texts: Sequence[str]) -> Run:
    from agents.memory import SQLiteSession

    model = FastChat()
    sessions = [SQLiteSession(f"telegram:{1000 + s}", db) for s in range(chats)]
    times: list[float] = []
    try:
        started = time.perf_counter()
        for t in range(turns):
            for session in sessions:
                text = texts[t % len(texts)]
                t0 = time.perf_counter()
                items = await session.get_items(limit=2 * WINDOW)
                history = tuple(Message(i["role"], str(i["content"])) for i in items)  # type: ignore[index,typeddict-item]
                reply = await model.complete(
                    ChatRequest("system", (*history, Message("user", text)), 1024)
                )
                await session.add_items([{"role": "user", "content": text}])
                await session.add_items([{"role": "assistant", "content": reply.text}])
                times.append(time.perf_counter() - t0)
        wall = time.perf_counter() - started
    finally:
        for session in sessions:
            session.close()
    return Run("agents.SQLiteSession", chats * turns, wall, tuple(times))


def agents_available() -> bool:
    try:
        from agents.memory import SQLiteSession  # noqa: F401
    except ImportError:
        return False
    return True


async def measure(chats: int, turns: int, rounds: int, *, compare: bool = True) -> Result:
    """Alternate theirs/ours `rounds` times on fresh databases; keep each side's median."""
    texts = messages(turns)
    compare = compare and agents_available()
    ours: list[Run] = []
    theirs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="ventana-bench-") as tmp:
        for r in range(rounds):
            if compare:
                theirs.append(await run_theirs(Path(tmp) / f"agents-{r}.db", chats, turns, texts))
            ours.append(await run_ours(Path(tmp) / f"ventana-{r}.db", chats, turns, texts))
    return Result(chats, turns, _median(ours), _median(theirs) if theirs else None)


def _median(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.rate)[len(runs) // 2]


def report(result: Result) -> list[Target]:
    print(
        f"== overhead: {result.chats} chats × {result.turns} turns interleaved, zero-latency "
        f"model, DB on disk, median of rounds"
    )
    runs = [result.ours] + ([result.theirs] if result.theirs else [])
    for run in runs:
        print(
            f"  {run.name:<22} {run.rate:8.1f} turns/s   p50 {ms(run.p50):>10}   "
            f"p99 {ms(run.p99):>10}"
        )
    if result.ratio is None:
        print("  openai-agents not installed: no baseline (pip install -e '.[bench]')")
        return []
    assert result.theirs is not None
    print(
        f"  throughput ratio ventana/agents = {result.ratio:.2f}×   p50 ratio "
        f"= {result.ours.p50 / result.theirs.p50:.2f}   p99 ratio = "
        f"{result.ours.p99 / result.theirs.p99:.2f}"
    )
    shown = f"{result.ratio:.2f}×"
    return [Target("overhead", "turns/s, ours ÷ SQLiteSession", result.ratio, 2.0, "high", shown)]


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="4 chats × 10 turns, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.chats, args.turns, args.rounds = 4, 10, 1
    quiet_logs()
    return report(asyncio.run(measure(args.chats, args.turns, args.rounds)))


if __name__ == "__main__":
    main()
