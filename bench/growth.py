"""Growth: per-turn time with 1,000,000 stored messages over 10,000 keys against 10,000.

    python -m bench.growth [--big N] [--small N] [--per-key M] [--hot X] [--turns T]
                           [--rounds R] [--quick]

Both databases have the same per-key shape: every key holds `--per-key` messages (100:
50 exchanges, the last 6 in the window, 2 pending, the rest folded into a summary and
searchable by recall), so the big one has `--big` ÷ 100 keys and the small one `--small`
÷ 100. The seeded exchanges are the support case of `bench.data.transcripts` (each key
from its own starting turn), so the turns' messages find real matches in the key's own
recall index, which is built over the seeded exchanges as the migration would.

Four arms are timed: the small and the big database, each with recall on and with
recall off, each arm on a database of its own seeded alike (the same rows, but for a
word that ends every user text, and replies that name the arm: no arm finds its texts
in a per-text cache another arm filled, as no real chat finds another's). All four stay open and
take turns in blocks of ten turns, in a rotating order, through `app.handler.handle`
with a zero-latency model and default settings, round-robin over ten ordinary keys; a
block's background folds finish before the next arm starts. On a loaded machine every
arm sees the same load, so the ratios hold even when the absolute times do not. The
growth figure is the p50 big ÷ small with recall on; what recall adds is on − off in
the big database. One key's search alone is timed on both indexes, the calls
interleaved: the index is shared by all keys, and a search must not walk the other
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
from dataclasses import dataclass, field, replace
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
from bot.app import App
from bot.conversation.inbound import Inbound
from memory.recall.hot import KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.terms import query_terms
from memory.store.sqlite import recall_index
from memory.store.sqlite.store import SQLiteStore
from memory.types import SessionKey
from providers.base import ChatReply, ChatRequest

PER_KEY = 100  # messages per key
TURN_KEYS = 10  # ordinary keys the turns go round
HOT_KEY = "telegram:hot"
BLOCK = 10  # turns an arm runs before the next arm takes over
SETTLE_S = 0.1  # after its block, an arm's background writes finish before the next
MARKS = {"small": "(norte)", "small-off": "(sur)", "big": "(este)", "big-off": "(oeste)"}
CASE = tuple((turn.user, turn.reply) for turn in long_support(320))


@dataclass(frozen=True, slots=True)
class Search:
    """One key's search alone, p50: on disk (FTS5) and held in memory; and the read of
    the key into memory (every batch of it, back to back)."""

    disk_s: float
    memory_s: float
    read_s: float
    exchanges: int


@dataclass(frozen=True, slots=True)
class Size:
    messages: int
    seed_s: float
    p50_s: float
    mean_s: float
    off_p50_s: float = 0.0  # the same turns with recall off
    search: Search = Search(0.0, 0.0, 0.0, 0)  # one key's recall search alone
    index_s: float = 0.0  # building the recall index over the seeded exchanges
    forget_s: float = 0.0  # `/forget` of one ordinary key, its index shard merged
    keys: int = 0


@dataclass(frozen=True, slots=True)
class Hot:
    """The hot key's turns in the big database, recall on and off."""

    exchanges: int
    p50_s: float
    off_p50_s: float
    search: Search


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


def layout(
    messages: int, per_key: int = PER_KEY, hot: int = 0, mark: str = ""
) -> list[SeedSession]:
    """`messages` ÷ `per_key` keys of `per_key` messages each (the support case, each from
    its own turn), and a hot key of `hot` exchanges when asked; `mark` ends every user
    text, so two databases seeded with different marks share no text."""
    exchanges = max(1, per_key // 2)
    count = max(TURN_KEYS, messages // (exchanges * 2))
    out = [
        SeedSession(key(i), exchanges, pending=2, turns=CASE, offset=i * 37, mark=mark)
        for i in range(1, count + 1)
    ]
    if hot:
        out.append(SeedSession(HOT_KEY, hot, pending=2, turns=CASE, mark=mark))
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


def search_times(
    paths: Sequence[Path], texts: Sequence[str], who: str, calls: int = 300
) -> list[Search]:
    """One key's search in each database, their calls interleaved (a loaded machine
    slows both alike); the query terms are built outside the timing."""
    dbs = [sqlite3.connect(path) for path in paths]
    try:
        where = [
            db.execute(
                "SELECT id, current_episode_id FROM sessions WHERE key = ?", (who,)
            ).fetchone()
            for db in dbs
        ]
        reads, held = [], []
        for db, (sid, episode) in zip(dbs, where, strict=True):
            t0 = time.perf_counter()
            index, after = KeyIndex(sid, episode), 0
            while after is not None:
                after = recall_index.load_key(db, index, after)
            reads.append(time.perf_counter() - t0)
            held.append(index)
        queries = [query_terms(text) for text in texts]
        disk: list[list[float]] = [[] for _ in dbs]
        memory: list[list[float]] = [[] for _ in dbs]
        for n in range(calls):
            for i, (db, (sid, episode)) in enumerate(zip(dbs, where, strict=True)):
                query = RecallQuery(sid, episode, queries[n % len(queries)])
                t0 = time.perf_counter()
                recall_index.search(db, query)
                t1 = time.perf_counter()
                held[i].search(query)
                memory[i].append(time.perf_counter() - t1)
                disk[i].append(t1 - t0)
        return [
            Search(percentile(d, 50), percentile(m, 50), r, len(h.entries))
            for d, m, r, h in zip(disk, memory, reads, held, strict=True)
        ]
    finally:
        for db in dbs:
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


class ArmChat(FastChat):
    """`FastChat` whose replies name the arm: no two arms write the same reply."""

    def __init__(self, arm: str) -> None:
        super().__init__()
        self.arm = arm

    async def complete(self, request: ChatRequest) -> ChatReply:
        reply = await super().complete(request)
        return replace(reply, text=f"{reply.text} ({self.arm})")


@dataclass
class Arm:
    """One configuration whose turns are timed: a database, recall on or off, the keys."""

    app: App
    recall: str
    keys: Sequence[str]
    times: list[float] = field(default_factory=list)
    said: int = 0

    async def turns(self, n: int, texts: Sequence[str], tag: str, keep: bool = True) -> None:
        for _ in range(n):
            who = self.keys[self.said % len(self.keys)]
            # Every turn says something new: a real message is not in any per-text cache.
            text = f"{texts[self.said % len(texts)]} ({tag} {self.said})"
            inbound = Inbound(
                SessionKey.parse(who), text, f"growth-{tag}-{self.said}", ts(self.said), who
            )
            self.said += 1
            t0 = time.perf_counter()
            await self.app.handler.handle(inbound)
            if keep:
                self.times.append(time.perf_counter() - t0)
        await self.app.folds.drain()  # no fold of this arm runs into the next one's turns
        await asyncio.sleep(SETTLE_S)  # nor its lazy "done" marks (committed within 50 ms)


async def _seeded(path: Path, sessions: list[SeedSession], name: str) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    count = await asyncio.to_thread(seed, path, sessions, progress=name)
    seeded = time.perf_counter() - t0
    return count, seeded, await asyncio.to_thread(index_seeded, path)


async def _run_arms(arms: dict[str, Arm], turns: int, rounds: int, texts: Sequence[str]) -> None:
    """Every arm's turns in blocks of `BLOCK`, the arms taking turns in a rotating order,
    so the load of a shared machine falls on all of them alike."""
    names = list(arms)
    for name in names:  # warm-up, not counted
        await arms[name].turns(BLOCK, texts, f"warm-{name}", keep=False)
    blocks = max(1, turns * rounds // BLOCK)
    for b in range(blocks):
        for name in names[b % len(names) :] + names[: b % len(names)]:
            await arms[name].turns(BLOCK, texts, name)


async def measure(
    small: int, big: int, turns: int, rounds: int, *, per_key: int = PER_KEY, hot: int = 0
) -> Result:
    texts = [turn.user for turn in long_support(60)]
    ordinary = [key(i) for i in range(1, TURN_KEYS + 1)]
    with tempfile.TemporaryDirectory(prefix="ventana-growth-") as tmp:
        paths, seeded, indexed, keys = {}, {}, {}, {}
        for name, messages in (("small", small), ("big", big)):
            for arm, mark in ((name, MARKS[name]), (f"{name}-off", MARKS[f"{name}-off"])):
                # Each arm its own database, seeded alike but for a mark in every user
                # text: no arm finds its texts in a per-text cache another arm filled.
                paths[arm] = Path(tmp) / f"{arm}.db"
                sessions = layout(messages, per_key, hot if name == "big" else 0, mark)
                count, seed_s, index_s = await _seeded(paths[arm], sessions, arm)
                if arm == name:
                    keys[name] = len(sessions) - (1 if hot and name == "big" else 0)
                    seeded[name] = ((count - (hot if name == "big" else 0)) * 2, seed_s)
                    indexed[name] = index_s
        search = dict(
            zip(
                ("small", "big"),
                search_times([paths["small"], paths["big"]], texts, key(2)),
                strict=True,
            )
        )
        arms: dict[str, Arm] = {}
        try:
            for name in ("small", "big", "small-off", "big-off"):
                recall = "off" if name.endswith("-off") else "on"
                chat = ArmChat(name)
                app = await build_app(bench_settings(paths[name], recall=recall), chat)
                arms[name] = Arm(app, recall, ordinary)
                if hot and name.startswith("big"):
                    arms[f"hot-{recall}"] = Arm(app, recall, [HOT_KEY])
            await _run_arms(arms, turns, rounds, texts)
        finally:
            for app in {id(arm.app): arm.app for arm in arms.values()}.values():
                await app.aclose()
        forgets = {name: await forget_time(paths[name]) for name in ("small", "big")}
        hot_result = None
        if hot:
            [hot_search] = search_times([paths["big"]], texts, HOT_KEY, calls=100)
            on, off = arms["hot-on"].times, arms["hot-off"].times
            hot_result = Hot(hot, percentile(on, 50), percentile(off, 50), hot_search)
    sizes = {
        name: Size(
            seeded[name][0],
            seeded[name][1],
            percentile(arms[name].times, 50),
            statistics.fmean(arms[name].times),
            percentile(arms[f"{name}-off"].times, 50),
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
            f"forget one key {ms(size.forget_s)}"
        )
    print(f"  ratio big/small: p50 {result.p50_ratio:.2f}×   mean {result.mean_ratio:.2f}×")
    added = result.big.p50_s - result.big.off_p50_s
    walk = result.big.search.disk_s / result.small.search.disk_s
    print(f"  recall adds to the big DB's p50: {ms(added)} (on − off, same run)")
    print(f"  one key's search, big ÷ small index: {walk:.2f}× (≈1: no walk over other keys)")
    for name, size in (("small", result.small), ("big", result.big)):
        found = size.search
        print(
            f"  one key's search ({name}): on disk {ms(found.disk_s)}, held in memory "
            f"{ms(found.memory_s)}; reading its {found.exchanges} exchanges into memory "
            f"{ms(found.read_s)} (in the background, after its first search)"
        )
    if result.hot is not None:
        hot = result.hot
        print(
            f"  hot key ({hot.exchanges:,} exchanges, big DB; not in the growth figure): "
            f"p50 {ms(hot.p50_s)}, recall off {ms(hot.off_p50_s)}; its search on disk "
            f"{ms(hot.search.disk_s)}, in memory {ms(hot.search.memory_s)}; read into "
            f"memory {ms(hot.search.read_s)}"
        )
    label = f"per-turn p50, {result.big.messages:,} ÷ {result.small.messages:,} msgs"
    return [Target("growth", label, result.p50_ratio, 1.1, "low", f"{result.p50_ratio:.2f}×")]


def recall_targets(result: Result) -> list[Target]:
    """Recall's own targets: its cost in a turn, and no walk over other keys' entries."""
    added = result.big.p50_s - result.big.off_p50_s
    walk = result.big.search.disk_s / result.small.search.disk_s
    return [
        Target("growth", "recall's cost in a turn's p50 (big DB)", added * 1000, 0.5, "low",
               f"{added * 1000:.2f} ms", "0.5 ms"),
        Target("growth", "one key's search, big ÷ small index", walk, 1.2, "low", f"{walk:.2f}×"),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000, help="messages in the big DB")
    parser.add_argument("--small", type=int, default=10_000, help="messages in the small DB")
    parser.add_argument("--per-key", type=int, default=PER_KEY, help="messages per key")
    parser.add_argument("--hot", type=int, default=5_000, help="exchanges of the hot key")
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="turns × rounds an arm")
    parser.add_argument(
        "--quick", action="store_true", help="100,000 vs 10,000 messages, 60 turns an arm"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.big, args.turns, args.rounds, args.hot = 100_000, 60, 1, 1_000
    quiet_logs()
    result = asyncio.run(
        measure(args.small, args.big, args.turns, args.rounds, per_key=args.per_key, hot=args.hot)
    )
    return report(result) + recall_targets(result)


if __name__ == "__main__":
    main()
