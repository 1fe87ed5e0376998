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

Offline folds: the same "folds due" run with the offline summarizer (extractive summary
and fact guard, CPU rather than a network wait), once with its CPU in a worker process
(`VENTANA_FOLD_WORKERS=1`, the default) and once on the event loop (`=0`); each is
p50(offline folds) ÷ p50(no folds). Next to each, the CPU of the event loop's process and
of the fold worker over the second wave.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from memory.fold.offload import ProcessFoldRunner
from memory.types import SessionKey


@dataclass(frozen=True, slots=True)
class Wave:
    wall_s: float
    latencies: tuple[float, ...]
    cpu_s: float = 0.0  # this process's CPU over the wave
    worker_cpu_s: float = 0.0  # the fold workers' CPU over the wave

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
    offline: Wave  # offline folds due, their CPU in a worker process
    offline_loop: Wave  # the same on the event loop

    def ratio(self, wave: Wave) -> float:
        return wave.p50 / self.no_folds.p50

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

    started, cpu, worker = time.perf_counter(), time.process_time(), app.folds.runner.cpu_s
    latencies = await asyncio.gather(*(one(key) for key in keys))
    return Wave(
        time.perf_counter() - started,
        tuple(latencies),
        time.process_time() - cpu,
        app.folds.runner.cpu_s - worker,
    )


async def _run(
    db: Path,
    keys: Sequence[str],
    latency: float,
    fold_latency: float,
    fold_batch: int = 4,
    offline_workers: int | None = None,
) -> tuple[Wave, Wave, int]:
    summary = SleepySummaryModel(fold_latency)
    model: dict[str, Any] = {"summary_model": "openai:bench-summary"}
    if offline_workers is not None:
        model = {"summary_model": "offline", "fold_workers": offline_workers}
    settings = bench_settings(db, fold_batch=fold_batch, **model)
    app = await build_app(settings, FastChat(delay=latency), summary)
    if isinstance(app.folds.runner, ProcessFoldRunner):
        await app.folds.runner.start()  # the worker's start-up is not inside a wave
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
        names = ("fresh", "quiet", "due", "offline", "offline_loop")
        fresh, quiet, due, offline, on_loop = (Path(tmp) / f"{name}.db" for name in names)
        for db in (quiet, due, offline, on_loop):
            await asyncio.to_thread(seed, db, [SeedSession(k, 9, summarize=False) for k in keys])
        burst, _, _ = await _run(fresh, keys, latency, fold_latency)
        # Same data and turns; only whether a fold is due differs (batch 4 vs never).
        _, no_folds, _ = await _run(quiet, keys, latency, fold_latency, fold_batch=200)
        _, folds, calls = await _run(due, keys, latency, fold_latency)
        _, worker, _ = await _run(offline, keys, latency, fold_latency, offline_workers=1)
        _, loop, _ = await _run(on_loop, keys, latency, fold_latency, offline_workers=0)
    return Result(chats, latency, burst, no_folds, folds, calls, worker, loop)


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
        f"p99 {ms(percentile(result.no_folds.latencies, 99))}   "
        f"CPU {result.no_folds.cpu_s:.2f} s"
    )
    print(
        f"  second wave, folds running ({result.fold_calls} summary calls): "
        f"p50 {ms(result.folds.p50)}   "
        f"p99 {ms(percentile(result.folds.latencies, 99))}   CPU {result.folds.cpu_s:.2f} s"
    )
    print(f"  reply p50 ratio folds/no folds = {result.fold_ratio:.3f}")
    for name, arm in (("in a worker", result.offline), ("on the loop", result.offline_loop)):
        print(
            f"  second wave, offline folds {name}: p50 {ms(arm.p50)}   "
            f"p99 {ms(percentile(arm.latencies, 99))}   ratio {result.ratio(arm):.3f}   "
            f"CPU loop process {arm.cpu_s:.2f} s, worker {arm.worker_cpu_s:.2f} s"
        )
    return [
        Target(
            "concurrency",
            f"throughput ÷ ideal, {n} chats × {lat:g} s",
            result.efficiency,
            0.95,
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
        Target(
            "concurrency",
            "reply p50 with offline folds ÷ without",
            result.ratio(result.offline),
            1.05,
            "low",
            f"{result.ratio(result.offline):.3f}",
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
