"""Recall on PostgreSQL at scale: one key's search as the table fills with other keys.

    python -m bench.postgres.recall [--keys 20,2000] [--per-key 100] [--searches 300]
                                    [--url postgresql://…] [--quick]

Two databases on one server, filled alike (bulk `COPY` of exchanges and their vectors,
as the store writes them): the small one with the first `--keys` keys, the large one
with the same keys and as many more as the second number says. The same searches on the
same first 20 keys run on both, each search on one then on the other (the order
alternating), so a loaded machine slows both alike. Figures, each next to its baseline:

- search p50/p99 and shared buffers per search (EXPLAIN ANALYZE BUFFERS, independent of
  machine load) on the large database against the small one: a search that walked other
  keys' entries would grow with them (target: ratio ≤ 1.2×);
- `record_exchange` p50 of a signal exchange (its vector written in the same statement)
  against a noise one (nothing indexed): what the index adds to a turn's write.

A throwaway server is started unless `--url` names a database (it is emptied, and a
second database, its name with `_big`, is created next to it: the role needs CREATEDB).
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
from psycopg import sql

from bench.common import T0, Target, ms, percentile, quiet_logs
from memory.recall.port import RecallQuery
from memory.recall.rank import searchable
from memory.recall.terms import query_terms
from memory.store.postgres import recall
from memory.store.postgres.store import PostgresStore
from memory.store.turns import NewExchange

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
    stores: Sequence[PostgresStore], queries: list[tuple[Any, ...]]
) -> list[list[float]]:
    """Each store's search times, the stores taking turns on each query (in an order
    that alternates), so the load of a shared machine falls on them alike."""
    times: list[list[float]] = [[] for _ in stores]
    for n, (sid, ep, query) in enumerate(queries):
        order = list(enumerate(stores))
        for i, store in order if n % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            await store.recall(RecallQuery(sid, ep, query))
            times[i].append(time.perf_counter() - started)
    return times


async def buffers_per_search(url: str, queries: list[tuple[Any, ...]]) -> float:
    """The mean shared buffers of both statements of a search."""
    buffers = 0
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for sid, ep, query in queries[:50]:
            buffers += await _buffers(conn, sid, ep, query)
    return buffers / min(len(queries), 50)


async def same_keys(urls: Sequence[str], queries: list[tuple[Any, ...]]) -> None:
    """The probed sessions are the same keys, with the same exchanges, in every database."""
    seen = []
    for url in urls:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            cur = await conn.execute(
                "SELECT s.key, count(x.id), max(x.id) FROM sessions s JOIN exchanges x"
                " ON x.session_id = s.id WHERE s.id = ANY(%s) GROUP BY s.key ORDER BY s.key",
                (sorted({q[0] for q in queries}),),
            )
            seen.append(await cur.fetchall())
    assert all(rows == seen[0] for rows in seen), "the databases were not filled alike"


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


async def run(urls: tuple[str, str], args: argparse.Namespace) -> list[Target]:
    """`urls`: the small database and the large one (both empty)."""
    small_url, big_url = urls
    stores = [await PostgresStore.open(url, pool_size=2) for url in urls]
    try:
        words = vocabulary(3000, random.Random(1))
        small, large = args.keys
        await fill(small_url, 0, small, args.per_key, words)
        await fill(big_url, 0, small, args.per_key, words)  # the same keys, alike
        await fill(big_url, small, large, args.per_key, words)
        queries = await probes(small_url, random.Random(2), args.searches, args.per_key)
        await same_keys(urls, queries)
        base_t, big_t = await measure(stores, queries)
        base_b = await buffers_per_search(small_url, queries)
        big_b = await buffers_per_search(big_url, queries)
        signal, noise = await writes(stores[0], args.searches)
    finally:
        for store in stores:
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
        return asyncio.run(run(_beside(args.url), args))
    from tests.support.postgres import start_server  # a throwaway server, as the tests start it

    for server in start_server():
        urls = (server.create_database("bench"), server.create_database("bench_big"))
        return asyncio.run(run(urls, args))
    return []


def _beside(url: str) -> tuple[str, str]:
    """`url` emptied, and a fresh database next to it named after it with `_big`."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        name = conn.info.dbname
        big = f"{name}_big"
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(big)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(big)))
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = big
    return url, psycopg.conninfo.make_conninfo(**info)


if __name__ == "__main__":
    main()
