"""Growth: per-turn time with 1,000,000 stored messages against 10,000, same run.

    python -m bench.growth [--big N] [--small N] [--turns T] [--rounds R] [--quick]

Both databases are seeded straight through sqlite3 (see `bench.seed`), in a temporary
directory that lives only for this run: the big one holds `--big` messages (exchanges ×
2) over many sessions, one of which (the target) holds a tenth of them; the small one has
the same shape at `--small`. Each round runs T turns, round-robin over the target and
nine other seeded sessions, through `app.handler.handle` with a zero-latency model and
default settings; rounds alternate small/big. Per-turn p50 and mean are the medians over
rounds; the figure is big ÷ small.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import common
from bench.seed import SeedSession, seed
from bench.transcripts import long_support
from bot.conversation.inbound import Inbound

SESSIONS_PER_DB = 1000
OTHERS = 9


@dataclass(frozen=True, slots=True)
class Size:
    messages: int
    seed_s: float
    p50_s: float
    mean_s: float


@dataclass(frozen=True, slots=True)
class Result:
    small: Size
    big: Size

    @property
    def p50_ratio(self) -> float:
        return self.big.p50_s / self.small.p50_s

    @property
    def mean_ratio(self) -> float:
        return self.big.mean_s / self.small.mean_s


def layout(messages: int) -> list[SeedSession]:
    """A tenth of the exchanges in the target session, the rest spread evenly."""
    exchanges = messages // 2
    target = exchanges // 10
    sessions = min(SESSIONS_PER_DB, max(OTHERS + 1, exchanges // 50))
    rest, extra = divmod(exchanges - target, sessions - 1)
    out = [SeedSession("telegram:1", target, pending=2)]
    for i in range(2, sessions + 1):
        out.append(SeedSession(f"telegram:{i}", rest + (1 if i - 2 < extra else 0), pending=2))
    return out


async def _turns(db: Path, turns: int, round_no: int, texts: Sequence[str]) -> list[float]:
    app = await common.build_app(common.bench_settings(db), common.FastChat())
    keys = ["telegram:1"] + [f"telegram:{i}" for i in range(2, 2 + OTHERS)]
    times: list[float] = []
    try:
        for t in range(turns):
            key = keys[t % len(keys)]
            text = texts[t % len(texts)]
            inbound = Inbound(key, text, f"growth-{round_no}-{t}", common.ts(t), key)
            t0 = time.perf_counter()
            await app.handler.handle(inbound)
            times.append(time.perf_counter() - t0)
        await app.folds.drain()
    finally:
        await app.aclose()
    return times


async def measure(small: int, big: int, turns: int, rounds: int) -> Result:
    texts = [turn.user for turn in long_support(60)]
    with tempfile.TemporaryDirectory(prefix="ventana-growth-") as tmp:
        paths, seeded = {}, {}
        for name, messages in (("small", small), ("big", big)):
            paths[name] = Path(tmp) / f"{name}.db"
            t0 = time.perf_counter()
            count = await asyncio.to_thread(seed, paths[name], layout(messages))
            seeded[name] = (count * 2, time.perf_counter() - t0)
        p50s: dict[str, list[float]] = {"small": [], "big": []}
        means: dict[str, list[float]] = {"small": [], "big": []}
        for r in range(rounds):
            for name in ("small", "big"):
                times = await _turns(paths[name], turns, r, texts)
                p50s[name].append(common.percentile(times, 50))
                means[name].append(statistics.fmean(times))
    sizes = {
        name: Size(
            seeded[name][0],
            seeded[name][1],
            statistics.median(p50s[name]),
            statistics.median(means[name]),
        )
        for name in ("small", "big")
    }
    return Result(sizes["small"], sizes["big"])


def report(result: Result) -> list[common.Target]:
    print("== growth: per-turn time, big DB vs small DB (zero-latency model, defaults)")
    for name, size in (("small", result.small), ("big", result.big)):
        print(
            f"  {name:<6} {size.messages:>10,} messages (seeded in {size.seed_s:5.1f} s)   "
            f"p50 {common.ms(size.p50_s):>10}   mean {common.ms(size.mean_s):>10}"
        )
    print(f"  ratio big/small: p50 {result.p50_ratio:.2f}×   mean {result.mean_ratio:.2f}×")
    label = f"per-turn p50, {result.big.messages:,} ÷ {result.small.messages:,} msgs"
    return [
        common.Target("growth", label, result.p50_ratio, 1.2, "low", f"{result.p50_ratio:.2f}×")
    ]


def main(argv: Sequence[str] | None = None) -> list[common.Target]:
    args = common.bench_args(
        __doc__,
        argv,
        {"big": 1_000_000, "small": 10_000, "turns": 100, "rounds": 3},
        quick={"big": 100_000, "turns": 30, "rounds": 1},
        quick_help="100k vs 10k, 30 turns, 1 round",
        helps={"big": "messages in the big DB", "small": "messages in the small DB"},
    )
    return report(asyncio.run(measure(args.small, args.big, args.turns, args.rounds)))


if __name__ == "__main__":
    main()
