"""Recall on PostgreSQL at scale: one key's search as the table fills with other keys.

    python -m bench.postgres.recall [--keys 20,2000] [--per-key 100] [--searches 300]
                                    [--url postgresql://…] [--quick]

The database is filled in steps (bulk `COPY` of exchanges and their vectors, as the
store writes them), first `--keys` small then large; at each step the same searches run
on the same first 20 keys. Figures, each next to its baseline in the same run:

- search p50/p99 and shared buffers per search (EXPLAIN ANALYZE BUFFERS, independent of
  machine load) at the large step against the small one: a search that walked other
  keys' entries would grow with them (target: ratio ≤ 1.2×);
- `record_exchange` p50 of a signal exchange (its vector written in the same statement)
  against a noise one (nothing indexed): what the index adds to a turn's write.

A throwaway server is started unless `--url` names a database (it is emptied).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import psycopg

from bench.common import T0, Target, ms, percentile, quiet_logs
from memory.recall.port import RecallQuery
from memory.recall.rank import searchable
from memory.recall.terms import query_terms
from memory.store.conversation import NewExchange
from memory.store.postgres import recall
from memory.store.postgres.store import PostgresStore

PROBED = 20  # the keys searched at every step
_SYLLABLES = tuple(c + v for c in "bdflmnrst" for v in "aeio")


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def texts(key: int, n: int, words: Sequence[str], rng: random.Random) -> list[tuple[str, str]]:
    """`n` exchanges of one key: shared vocabulary (Zipf-like) and a fact now and then."""
    weights = [1 / (r + 1) for r in range(len(words))]
    out = []
    for i in range(n):
        user = " ".join(rng.choices(words, weights, k=12))
        if i % 7 == 0:
            user += f" pedido #PED-{key}-{i}"
        out.append((user, " ".join(rng.choices(words, weights, k=16))))
    return out


async def fill(url: str, first: int, last: int, per_key: int, words: Sequence[str]) -> None:
    """Keys `first..last-1` with their episode and exchanges (one `COPY`), then their
    recall vectors (the migration's backfill, as the store writes them)."""
    rng = random.Random(first)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        rows = []
        for key in range(first, last):
            cur = await conn.execute(
                "INSERT INTO sessions (key, created_at) VALUES (%s, %s) RETURNING id",
                (f"bench:{key}", T0),
            )
            sid = (await cur.fetchone())[0]  # type: ignore[index]
            cur = await conn.execute(
                "INSERT INTO episodes (session_id, started_at) VALUES (%s, %s) RETURNING id",
                (sid, T0),
            )
            ep = (await cur.fetchone())[0]  # type: ignore[index]
            await conn.execute(
                "UPDATE sessions SET current_episode_id = %s WHERE id = %s", (ep, sid)
            )
            for n, (user, reply) in enumerate(texts(key, per_key, words, rng)):
                rows.append((sid, ep, user, reply, True, T0 + timedelta(seconds=n)))
        async with conn.cursor().copy(
            "COPY exchanges (session_id, episode_id, user_text, reply_text, signal, created_at)"
            " FROM STDIN"
        ) as copy:
            for row in rows:
                await copy.write_row(row)
        await recall.backfill(conn)
        await conn.commit()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("VACUUM ANALYZE")


async def probes(url: str, rng: random.Random, count: int, per_key: int) -> list[tuple[Any, ...]]:
    """`count` searches on the first keys: (session, episode, query) from their own words."""
    out = []
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for _ in range(count):
            key = rng.randrange(PROBED)
            cur = await conn.execute(
                "SELECT s.id, s.current_episode_id, x.user_text FROM sessions s"
                " JOIN exchanges x ON x.session_id = s.id WHERE s.key = %s"
                " ORDER BY x.id OFFSET %s LIMIT 1",
                (f"bench:{key}", rng.randrange(min(50, per_key))),
            )
            sid, ep, text = await cur.fetchone()  # type: ignore[misc]
            words = text.split()
            out.append((sid, ep, query_terms(" ".join(rng.sample(words, 3)))))
    return out


async def measure(
    store: PostgresStore, url: str, queries: list[tuple[Any, ...]]
) -> tuple[list[float], float]:
    """Search times, and the mean shared buffers of both statements per search."""
    times = []
    for sid, ep, query in queries:
        started = time.perf_counter()
        await store.recall(RecallQuery(sid, ep, query))
        times.append(time.perf_counter() - started)
    buffers = 0
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for sid, ep, query in queries[:50]:
            buffers += await _buffers(conn, sid, ep, query)
    return times, buffers / min(len(queries), 50)


async def _buffers(conn: psycopg.AsyncConnection[Any], sid: int, ep: int, query: Any) -> int:
    """Shared buffers the search's statements touch, as the store runs them."""
    total = await _explained(conn, recall.STATS, recall.stats_params(sid, query))
    docs, df = await recall.key_stats(conn, sid, query)
    wanted = searchable(query, df, docs)
    if wanted:
        params = recall.search_params(sid, ep, wanted, df, docs, None)
        total += await _explained(conn, recall.SEARCH, params)
    return total


async def _explained(conn: psycopg.AsyncConnection[Any], statement: str, params: Any) -> int:
    cur = await conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}", params)
    row = await cur.fetchone()
    assert row is not None
    plan = row[0][0]["Plan"]
    return int(plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0))


async def writes(store: PostgresStore, n: int) -> tuple[float, float]:
    """`record_exchange` p50 of signal exchanges and of noise ones, interleaved."""
    state = await store.turn_state("bench:writes", 6, T0)
    rng = random.Random(7)
    words = vocabulary(500, rng)
    timed: dict[bool, list[float]] = {True: [], False: []}
    for i, (user, reply) in enumerate(texts(0, 2 * n, words, rng)):
        signal = i % 2 == 0
        new = NewExchange(
            state.session_id, state.episode.id, user, reply, signal,
            None if signal else "empty", T0 + timedelta(seconds=i),
        )  # fmt: skip
        started = time.perf_counter()
        await store.record_exchange(new)
        timed[signal].append(time.perf_counter() - started)
    return percentile(timed[True], 50), percentile(timed[False], 50)


async def run(url: str, args: argparse.Namespace) -> list[Target]:
    store = await PostgresStore.open(url, pool_size=2)
    try:
        words = vocabulary(3000, random.Random(1))
        small, large = args.keys
        await fill(url, 0, small, args.per_key, words)
        queries = await probes(url, random.Random(2), args.searches, args.per_key)
        base_t, base_b = await measure(store, url, queries)
        await fill(url, small, large, args.per_key, words)
        big_t, big_b = await measure(store, url, queries)
        signal, noise = await writes(store, args.searches)
    finally:
        await store.close()
    rows = [
        (f"search p50, {small} keys", percentile(base_t, 50)),
        (f"search p50, {large} keys", percentile(big_t, 50)),
        (f"search p99, {small} keys", percentile(base_t, 99)),
        (f"search p99, {large} keys", percentile(big_t, 99)),
        ("record_exchange p50, noise (not indexed)", noise),
        ("record_exchange p50, signal (indexed)", signal),
    ]
    print(f"== recall on PostgreSQL: {args.per_key} exchanges per key, {args.searches} searches")
    for name, value in rows:
        print(f"  {name:<44} {ms(value):>12}")
    print(f"  {'shared buffers per search, ' + str(small) + ' keys':<44} {base_b:>12.1f}")
    print(f"  {'shared buffers per search, ' + str(large) + ' keys':<44} {big_b:>12.1f}")
    growth = percentile(big_t, 50) / max(percentile(base_t, 50), 1e-9)
    pages = big_b / max(base_b, 1e-9)
    targets = [
        Target(
            "pg-recall",
            f"search p50 growth {small}→{large} keys",
            growth,
            1.2,
            "low",
            f"{growth:.2f}×",
        ),
        Target(
            "pg-recall",
            f"buffers per search growth {small}→{large} keys",
            pages,
            1.2,
            "low",
            f"{pages:.2f}×",
        ),
        Target(
            "pg-recall",
            "index write added to record_exchange p50",
            (signal - noise) * 1000,
            1.0,
            "low",
            ms(signal - noise),
            "1 ms",
        ),
    ]
    for target in targets:
        print(target.line())
    return targets


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--keys", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--per-key", type=int, default=100)
    parser.add_argument("--searches", type=int)
    parser.add_argument("--url", help="an existing PostgreSQL database (emptied first)")
    parser.add_argument("--quick", action="store_true", help="20 → 200 keys, 100 searches")
    args = parser.parse_args(argv)
    # --quick sets only what is not given explicitly
    keys, searches = ([20, 200], 100) if args.quick else ([20, 2000], 300)
    args.keys = args.keys or keys
    args.searches = args.searches or searches
    quiet_logs()
    if args.url:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        return asyncio.run(run(args.url, args))
    from tests.support.postgres import start_server  # a throwaway server, as the tests start it

    for server in start_server():
        return asyncio.run(run(server.create_database("bench"), args))
    return []


if __name__ == "__main__":
    main()
