"""Concurrency: many chats at once with a slow chat model, and slow folds off the reply path.

    python -m bench.concurrency [--chats N] [--latency S] [--fold-latency S] [--quick]

Throughput: N chats each send one message at the same instant; the chat model sleeps
`--latency` seconds (asyncio.sleep). Ideal is N ÷ latency turns per second (every call
overlapping); the figure is measured ÷ ideal.

Folds: two runs on identically seeded databases (every chat has 9 signal exchanges and no
summary; window 6) and a summary model that sleeps `--fold-latency` seconds. In each run
every chat sends two waves of one message; the reply latencies of the second wave are
compared. In the "folds due" run (fold batch 4) the first wave makes 4 pending and
requests a background fold per chat; folds run during the second wave, at most
VENTANA_FOLD_CONCURRENCY at once, the rest queued. In the "no folds" run the fold batch is
200, so nothing is due and the turns are otherwise the same. The figure is p50(folds) ÷
p50(no folds).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import (
    FastChat,
    SleepySummaryModel,
    Target,
    bench_args,
    bench_settings,
    build_app,
    ms,
    percentile,
    ts,
)
from bench.data.seed import SeedSession, seed
from bot.app import App
from bot.conversation.inbound import Inbound
from memory.types import SessionKey


@dataclass(frozen=True, slots=True)
class Wave:
    wall_s: float
    latencies: tuple[float, ...]

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 50)


@dataclass(frozen=True, slots=True)
class Result:
    chats: int
    latency: float
    burst: Wave
    no_folds: Wave
    folds: Wave
    fold_calls: int  # summary-model calls started during the folds run

    @property
    def efficiency(self) -> float:
        return (self.chats / self.burst.wall_s) / (self.chats / self.latency)

    @property
    def fold_ratio(self) -> float:
        return self.folds.p50 / self.no_folds.p50


async def wave(app: App, keys: Sequence[str], tag: str) -> Wave:
    async def one(key: str) -> float:
        t0 = time.perf_counter()
        inbound = Inbound(
            SessionKey.parse(key), f"Hola, ¿cómo va mi pedido? ({tag})", f"{tag}-{key}", ts(0), key
        )
        replies = await app.handler.handle(inbound)
        assert replies
        return time.perf_counter() - t0

    started = time.perf_counter()
    latencies = await asyncio.gather(*(one(key) for key in keys))
    return Wave(time.perf_counter() - started, tuple(latencies))


async def _run(
    db: Path, keys: Sequence[str], latency: float, fold_latency: float, fold_batch: int = 4
) -> tuple[Wave, Wave, int]:
    summary = SleepySummaryModel(fold_latency)
    settings = bench_settings(db, summary_model="openai:bench-summary", fold_batch=fold_batch)
    app = await build_app(settings, FastChat(delay=latency), summary)
    try:
        first = await wave(app, keys, "w1")
        second = await wave(app, keys, "w2")
        started = summary.calls
    finally:
        await app.aclose()  # folds still queued are cancelled: only the waves are timed
    return first, second, started


async def measure(chats: int, latency: float, fold_latency: float) -> Result:
    keys = [f"telegram:{100_000 + i}" for i in range(chats)]
    with tempfile.TemporaryDirectory(prefix="ventana-conc-") as tmp:
        fresh, quiet, due = (Path(tmp) / f"{name}.db" for name in ("fresh", "quiet", "due"))
        for db in (quiet, due):
            await asyncio.to_thread(seed, db, [SeedSession(k, 9, summarize=False) for k in keys])
        burst, _, _ = await _run(fresh, keys, latency, fold_latency)
        # Same data and turns; only whether a fold is due differs (batch 4 vs never).
        _, no_folds, _ = await _run(quiet, keys, latency, fold_latency, fold_batch=200)
        _, folds, calls = await _run(due, keys, latency, fold_latency)
    return Result(chats, latency, burst, no_folds, folds, calls)


def report(result: Result) -> list[Target]:
    n, lat = result.chats, result.latency
    print(f"== concurrency: {n} chats at once, chat model {lat:g} s (asyncio.sleep)")
    print(
        f"  burst of {n} new chats: wall {result.burst.wall_s:.2f} s, "
        f"{n / result.burst.wall_s:.1f} turns/s vs ideal {n / lat:.1f} turns/s "
        f"= {result.efficiency:.1%}   reply p50 {ms(result.burst.p50)}"
    )
    print(
        f"  second wave, no folds due: p50 {ms(result.no_folds.p50)}   "
        f"p99 {ms(percentile(result.no_folds.latencies, 99))}"
    )
    print(
        f"  second wave, folds running ({result.fold_calls} summary calls): "
        f"p50 {ms(result.folds.p50)}   "
        f"p99 {ms(percentile(result.folds.latencies, 99))}"
    )
    print(f"  reply p50 ratio folds/no folds = {result.fold_ratio:.3f}")
    return [
        Target(
            "concurrency",
            f"throughput ÷ ideal, {n} chats × {lat:g} s",
            result.efficiency,
            0.9,
            "high",
            f"{result.efficiency:.1%}",
        ),
        Target(
            "concurrency",
            "reply p50 with slow folds ÷ without",
            result.fold_ratio,
            1.05,
            "low",
            f"{result.fold_ratio:.3f}",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> list[Target]:
    args = bench_args(
        __doc__,
        argv,
        {"chats": 1000, "latency": 2.0, "fold_latency": 3.0},
        quick={"chats": 100, "latency": 0.5, "fold_latency": 0.75},
        quick_help="100 chats, 0.5 s / 0.75 s",
    )
    return report(asyncio.run(measure(args.chats, args.latency, args.fold_latency)))


if __name__ == "__main__":
    main()
