"""Growth: per-turn time with 1,000,000 stored messages over 10,000 keys against 10,000.

    python -m bench.growth [--big N] [--small N] [--per-key M] [--hot X] [--turns T]
                           [--rounds R] [--quick]

Both databases have the same per-key shape: every key holds `--per-key` messages (100:
50 exchanges, the last 6 in the window, 2 pending, the rest folded into a summary and
searchable by recall), so the big one has `--big` ÷ 100 keys and the small one `--small`
÷ 100. The seeded exchanges are the support case of `bench.data.transcripts` (each key
from its own starting turn), so the turns' messages find real matches in the key's own
recall index, which is built over the seeded exchanges as the migration would.

Each round runs T turns, round-robin over ten ordinary keys, through
`app.handler.handle` with a zero-latency model and default settings, with recall on and
off on the same database; rounds alternate small/big and the on/off order. Per-turn p50
and mean are the medians over rounds; the growth figure is big ÷ small with recall on.
What recall adds is on − off in the big database. One key's search alone is timed on
both indexes: the index is shared by all keys, and a search must not walk the other
keys' entries (big ÷ small ≈ 1).

The big database also holds one hot key (`--hot` exchanges, outside the 1,000,000):
its turns are timed on their own line, not in the growth figure.
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

PER_KEY = 100  # messages per key
TURN_KEYS = 10  # ordinary keys the turns go round
HOT_KEY = "telegram:hot"
CASE = tuple((turn.user, turn.reply) for turn in long_support(320))


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
    keys: int = 0


@dataclass(frozen=True, slots=True)
class Hot:
    """The hot key's turns in the big database, recall on and off."""

    exchanges: int
    p50_s: float
    off_p50_s: float
    search_s: float


@dataclass(frozen=True, slots=True)
class Result:
    small: Size
    big: Size
    hot: Hot | None = None

    @property
    def p50_ratio(self) -> float:
        return self.big.p50_s / self.small.p50_s

    @property
    def mean_ratio(self) -> float:
        return self.big.mean_s / self.small.mean_s


def key(n: int) -> str:
    return f"telegram:{n}"


def layout(messages: int, per_key: int = PER_KEY, hot: int = 0) -> list[SeedSession]:
    """`messages` ÷ `per_key` keys of `per_key` messages each (the support case, each from
    its own turn), and a hot key of `hot` exchanges when asked."""
    exchanges = max(1, per_key // 2)
    count = max(TURN_KEYS, messages // (exchanges * 2))
    out = [
        SeedSession(key(i), exchanges, pending=2, turns=CASE, offset=i * 37)
        for i in range(1, count + 1)
    ]
    if hot:
        out.append(SeedSession(HOT_KEY, hot, pending=2, turns=CASE))
    return out


def index_seeded(path: Path) -> float:
    """Index the seeded exchanges (the seed writes rows straight, past the store)."""
    t0 = time.perf_counter()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        recall_index.rebuild(db)
        db.execute("COMMIT")
    finally:
        db.close()
    return time.perf_counter() - t0


def search_time(path: Path, texts: Sequence[str], who: str, calls: int = 300) -> float:
    """p50 of one key's search (its query terms built outside the timing)."""
    db = sqlite3.connect(path)
    try:
        sid, episode = db.execute(
            "SELECT id, current_episode_id FROM sessions WHERE key = ?", (who,)
        ).fetchone()
        queries = [query_terms(text) for text in texts]
        times = []
        for n in range(calls):
            t0 = time.perf_counter()
            recall_index.search(
                db, session_id=sid, episode_id=episode, query=queries[n % len(queries)],
                before=None, limit=8,
            )  # fmt: skip
            times.append(time.perf_counter() - t0)
        return percentile(times, 50)
    finally:
        db.close()


async def forget_time(path: Path) -> float:
    """Wall time of forgetting one ordinary key (not one the turns use) through the store."""
    store = await SQLiteStore.open(path)
    try:
        t0 = time.perf_counter()
        await store.forget(key(TURN_KEYS + 1))
        return time.perf_counter() - t0
    finally:
        await store.close()


async def _turns(
    db: Path, turns: int, tag: str, texts: Sequence[str], keys: Sequence[str], recall: str
) -> list[float]:
    app = await build_app(bench_settings(db, recall=recall), FastChat())
    times: list[float] = []
    try:
        for t in range(turns):
            who = keys[t % len(keys)]
            # Every turn says something new: a real message is not in any per-text cache.
            text = f"{texts[t % len(texts)]} ({tag}{recall} {t})"
            inbound = Inbound(who, text, f"growth-{tag}-{recall}-{t}", ts(t), who)
            t0 = time.perf_counter()
            await app.handler.handle(inbound)
            times.append(time.perf_counter() - t0)
        await app.folds.drain()
    finally:
        await app.aclose()
    return times


async def _seeded(path: Path, sessions: list[SeedSession], name: str) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    count = await asyncio.to_thread(seed, path, sessions, progress=name)
    seeded = time.perf_counter() - t0
    return count, seeded, await asyncio.to_thread(index_seeded, path)


async def measure(
    small: int, big: int, turns: int, rounds: int, *, per_key: int = PER_KEY, hot: int = 0
) -> Result:
    texts = [turn.user for turn in long_support(60)]
    ordinary = [key(i) for i in range(1, TURN_KEYS + 1)]
    with tempfile.TemporaryDirectory(prefix="ventana-growth-") as tmp:
        paths, seeded, indexed, search, keys = {}, {}, {}, {}, {}
        for name, messages in (("small", small), ("big", big)):
            paths[name] = Path(tmp) / f"{name}.db"
            sessions = layout(messages, per_key, hot if name == "big" else 0)
            keys[name] = len(sessions) - (1 if hot and name == "big" else 0)
            count, seed_s, indexed[name] = await _seeded(paths[name], sessions, name)
            seeded[name] = ((count - (hot if name == "big" else 0)) * 2, seed_s)
        p50s: dict[str, list[float]] = {n: [] for n in ("small", "big", "small-off", "big-off")}
        means: dict[str, list[float]] = {"small": [], "big": []}
        hots: dict[str, list[float]] = {"on": [], "off": []}
        await _turns(paths["small"], min(turns, 20), "warm", texts, ordinary, "on")
        for r in range(rounds):
            for name in ("small", "big") if r % 2 == 0 else ("big", "small"):
                for recall in ("on", "off") if r % 2 == 0 else ("off", "on"):
                    times = await _turns(paths[name], turns, f"r{r}", texts, ordinary, recall)
                    p50s[name if recall == "on" else f"{name}-off"].append(percentile(times, 50))
                    if recall == "on":
                        means[name].append(statistics.fmean(times))
                    if hot and name == "big":
                        got = await _turns(paths[name], turns, f"h{r}", texts, [HOT_KEY], recall)
                        hots[recall].append(percentile(got, 50))
        forgets = {}
        for name in ("small", "big"):
            search[name] = search_time(paths[name], texts, key(2))
            forgets[name] = await forget_time(paths[name])
        hot_result = None
        if hot:
            hot_search = search_time(paths["big"], texts, HOT_KEY)
            med = statistics.median
            hot_result = Hot(hot, med(hots["on"]), med(hots["off"]), hot_search)
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
            keys[name],
        )
        for name in ("small", "big")
    }
    return Result(sizes["small"], sizes["big"], hot_result)


def report(result: Result) -> list[Target]:
    print("== growth: per-turn time, big DB vs small DB (zero-latency model, recall on)")
    for name, size in (("small", result.small), ("big", result.big)):
        print(
            f"  {name:<6} {size.messages:>10,} messages over {size.keys:,} keys (seeded in "
            f"{size.seed_s:5.1f} s, indexed in {size.index_s:5.1f} s)   p50 {ms(size.p50_s):>9}"
            f"   mean {ms(size.mean_s):>9}   recall off: p50 {ms(size.off_p50_s):>9}   "
            f"one key's search p50 {ms(size.search_s):>9}   forget one key {ms(size.forget_s)}"
        )
    print(f"  ratio big/small: p50 {result.p50_ratio:.2f}×   mean {result.mean_ratio:.2f}×")
    added = result.big.p50_s - result.big.off_p50_s
    walk = result.big.search_s / result.small.search_s
    print(f"  recall adds to the big DB's p50: {ms(added)} (on − off, same run)")
    print(f"  one key's search, big ÷ small index: {walk:.2f}× (≈1: no walk over other keys)")
    if result.hot is not None:
        hot = result.hot
        print(
            f"  hot key ({hot.exchanges:,} exchanges, big DB; not in the growth figure): "
            f"p50 {ms(hot.p50_s)}, recall off {ms(hot.off_p50_s)}, "
            f"its search p50 {ms(hot.search_s)}"
        )
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
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000, help="messages in the big DB")
    parser.add_argument("--small", type=int, default=10_000, help="messages in the small DB")
    parser.add_argument("--per-key", type=int, default=PER_KEY, help="messages per key")
    parser.add_argument("--hot", type=int, default=5_000, help="exchanges of the hot key")
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="100,000 vs 10,000 messages, 40 turns, 1 round"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.big, args.turns, args.rounds, args.hot = 100_000, 40, 1, 1_000
    quiet_logs()
    result = asyncio.run(
        measure(args.small, args.big, args.turns, args.rounds, per_key=args.per_key, hot=args.hot)
    )
    return report(result) + recall_targets(result)


if __name__ == "__main__":
    main()
