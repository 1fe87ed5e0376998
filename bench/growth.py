"""Growth: per-turn time with 1,000,000 stored messages against 10,000, same run.

    python -m bench.growth [--big N] [--small N] [--turns T] [--rounds R] [--quick]

Recall is measured both ways: every round runs its turns with recall on and off on the
same database (the seeded exchanges are indexed first, as the migration would), so the
cost recall adds to a turn and the growth ratio with recall on come from one run. One
key's search alone is also timed against the small and the big index: the index is
shared by all keys, and a search must not walk the other keys' entries.

Both databases are seeded straight through sqlite3 (see `bench.data.seed`), in a temporary
directory that lives only for this run: the big one holds `--big` messages (exchanges ×
2) over many sessions, one of which (the target) holds a tenth of them; the small one has
the same shape at `--small`. Each round runs T turns, round-robin over the target and
nine other seeded sessions, through `app.handler.handle` with a zero-latency model and
default settings; rounds alternate small/big. Per-turn p50 and mean are the medians over
rounds; the figure is big ÷ small.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import (
    FastChat,
    Target,
    bench_settings,
    build_app,
    ms,
    percentile,
    quiet_logs,
    ts,
)
from bench.data.seed import SeedSession, seed
from bench.data.transcripts import long_support
from bot.conversation.inbound import Inbound
from memory.recall.terms import query_terms
from memory.store.sqlite import recall_index
from memory.store.sqlite.store import SQLiteStore
from memory.types import SessionKey

SESSIONS_PER_DB = 1000
OTHERS = 9


@dataclass(frozen=True, slots=True)
class Size:
    messages: int
    seed_s: float
    p50_s: float
    mean_s: float
    off_p50_s: float = 0.0  # the same turns with recall off
    search_s: float = 0.0  # one key's recall search alone, p50
    index_s: float = 0.0  # building the recall index over the seeded exchanges
    forget_s: float = 0.0  # `/forget` of one ordinary key, its index shard merged


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


def index_seeded(path: Path) -> float:
    """Index the seeded exchanges (the seed writes rows straight, past the store)."""
    t0 = time.perf_counter()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        recall_index.rebuild(db, progress=False)
        db.execute("COMMIT")
    finally:
        db.close()
    return time.perf_counter() - t0


def search_time(path: Path, texts: Sequence[str], calls: int = 300) -> float:
    """p50 of one key's search (telegram:2, the same size in both databases)."""
    db = sqlite3.connect(path)
    try:
        sid, episode = db.execute(
            "SELECT id, current_episode_id FROM sessions WHERE key = 'telegram:2'"
        ).fetchone()
        times = []
        for n in range(calls):
            query = query_terms(texts[n % len(texts)])
            t0 = time.perf_counter()
            recall_index.search(
                db, session_id=sid, episode_id=episode, query=query, before=None, limit=8
            )
            times.append(time.perf_counter() - t0)
        return percentile(times, 50)
    finally:
        db.close()


async def forget_time(path: Path) -> float:
    """Wall time of forgetting one ordinary key (telegram:3) through the store."""
    store = await SQLiteStore.open(path)
    try:
        t0 = time.perf_counter()
        await store.forget("telegram:3")
        return time.perf_counter() - t0
    finally:
        await store.close()


async def _turns(
    db: Path, turns: int, round_no: int, texts: Sequence[str], recall: str = "on"
) -> list[float]:
    app = await build_app(bench_settings(db, recall=recall), FastChat())
    keys = ["telegram:1"] + [f"telegram:{i}" for i in range(2, 2 + OTHERS)]
    times: list[float] = []
    try:
        for t in range(turns):
            key = keys[t % len(keys)]
            text = texts[t % len(texts)]
            inbound = Inbound(
                SessionKey.parse(key), text, f"growth-{round_no}-{recall}-{t}", ts(t), key
            )
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
        paths, seeded, indexed, search = {}, {}, {}, {}
        for name, messages in (("small", small), ("big", big)):
            paths[name] = Path(tmp) / f"{name}.db"
            t0 = time.perf_counter()
            count = await asyncio.to_thread(seed, paths[name], layout(messages))
            seeded[name] = (count * 2, time.perf_counter() - t0)
            indexed[name] = await asyncio.to_thread(index_seeded, paths[name])
        p50s: dict[str, list[float]] = {"small": [], "big": [], "small-off": [], "big-off": []}
        means: dict[str, list[float]] = {"small": [], "big": []}
        await _turns(paths["small"], min(turns, 20), -1, texts)  # warm-up, not counted
        for r in range(rounds):
            for name in ("small", "big"):
                for recall in ("on", "off") if r % 2 == 0 else ("off", "on"):
                    times = await _turns(paths[name], turns, r, texts, recall)
                    p50s[name if recall == "on" else f"{name}-off"].append(percentile(times, 50))
                    if recall == "on":
                        means[name].append(statistics.fmean(times))
        forgets = {}
        for name in ("small", "big"):
            search[name] = search_time(paths[name], texts)
            forgets[name] = await forget_time(paths[name])
    sizes = {
        name: Size(
            seeded[name][0],
            seeded[name][1],
            statistics.median(p50s[name]),
            statistics.median(means[name]),
            statistics.median(p50s[f"{name}-off"]),
            search[name],
            indexed[name],
            forgets[name],
        )
        for name in ("small", "big")
    }
    return Result(sizes["small"], sizes["big"])


def report(result: Result) -> list[Target]:
    print("== growth: per-turn time, big DB vs small DB (zero-latency model, recall on)")
    for name, size in (("small", result.small), ("big", result.big)):
        print(
            f"  {name:<6} {size.messages:>10,} messages (seeded in {size.seed_s:5.1f} s, "
            f"indexed in {size.index_s:5.1f} s)   p50 {ms(size.p50_s):>10}   "
            f"mean {ms(size.mean_s):>10}   recall off: p50 {ms(size.off_p50_s):>10}   "
            f"one key's search p50 {ms(size.search_s):>10}   forget one key {ms(size.forget_s)}"
        )
    print(f"  ratio big/small: p50 {result.p50_ratio:.2f}×   mean {result.mean_ratio:.2f}×")
    added = result.big.p50_s - result.big.off_p50_s
    walk = result.big.search_s / result.small.search_s
    print(f"  recall adds to the big DB's p50: {ms(added)} (on − off, same run)")
    print(f"  one key's search, big ÷ small index: {walk:.2f}× (≈1: no walk over other keys)")
    label = f"per-turn p50, {result.big.messages:,} ÷ {result.small.messages:,} msgs"
    return [Target("growth", label, result.p50_ratio, 1.2, "low", f"{result.p50_ratio:.2f}×")]


def recall_targets(result: Result) -> list[Target]:
    """Recall's own targets: its cost in a turn, and no walk over other keys' entries."""
    added = result.big.p50_s - result.big.off_p50_s
    walk = result.big.search_s / result.small.search_s
    return [
        Target("growth", "recall's cost in a turn's p50 (big DB)", added * 1000, 1.0, "low",
               f"{added * 1000:.2f} ms", "1 ms"),
        Target("growth", "one key's search, big ÷ small index", walk, 1.2, "low", f"{walk:.2f}×"),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000, help="messages in the big DB")
    parser.add_argument("--small", type=int, default=10_000, help="messages in the small DB")
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100k vs 10k, 30 turns, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.big, args.turns, args.rounds = 100_000, 30, 1
    quiet_logs()
    result = asyncio.run(measure(args.small, args.big, args.turns, args.rounds))
    return report(result) + recall_targets(result)


if __name__ == "__main__":
    main()
