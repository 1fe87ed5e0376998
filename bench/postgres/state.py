"""A turn's state read on PostgreSQL: the shipped statement against the one it replaced.

    python -m bench.postgres.state [--chats 20] [--turns 14] [--reads 2000] [--rounds 3]
                                   [--url postgresql://…] [--quick]

Every turn starts by reading its chat's state and window (`sql.STATE_AND_WINDOW`: the
session, episode, latest summary and last reply, the window's exchanges and the pending
ones before it). The statement it replaced (`PREVIOUS`, kept here verbatim, session 25)
returned one row per exchange, each carrying the state's thirty columns, and ran the
state's subqueries once per row (its CTE inlined). The shipped one returns one row, the
exchanges as one JSON array, the state read once (MATERIALIZED).

The database is filled by the real handler (`--chats` chats × `--turns` turns, offline
models, the default window and fold batch: windows with pending exchanges behind them);
then each arm reads every chat's state in turn, `--reads` times a round, the arms
alternating for `--rounds`, on one connection preparing its statements as the store's do.
Per read, each next to the baseline's: the worker's CPU (process time, rows decoded into
the store's values included) and the server's (the connection's backend, from `/proc`).
Both arms must give the same exchanges, or the run stops.

A throwaway server is started unless `--url` names a database (it is emptied first).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from bench.common import FastChat, Target, bench_settings, build_app, quiet_logs, ts
from bench.postgres.cpu import process_cpu_s
from bot.conversation.inbound import Inbound
from memory.store.postgres import sql
from memory.store.postgres.rows import exchange_of_json, exchange_row
from memory.types import Exchange, SessionKey

# The statement as it was before session 25 (one row per exchange, the state inlined).
PREVIOUS = (
    f"WITH st AS ({sql.STATE}) SELECT st.*, x.id AS x_id, x.episode_id AS x_episode_id,"
    " x.user_text AS x_user_text, x.reply_text AS x_reply_text, x.signal AS x_signal,"
    " x.noise_reason AS x_noise_reason, x.created_at AS x_created_at FROM st"
    " LEFT JOIN exchanges x ON x.episode_id = st.e_id AND x.signal"
    " AND x.id >= LEAST(COALESCE(st.m_checkpoint, 0) + 1, COALESCE((SELECT id FROM exchanges"
    "   WHERE episode_id = st.e_id AND signal ORDER BY id DESC LIMIT 1 OFFSET %(offset)s), 0))"
    " ORDER BY x.id"
)
Reader = Callable[[Any, str, int], Any]


async def read_previous(conn: Any, key: str, offset: int) -> list[Exchange]:
    cur = await conn.execute(PREVIOUS, {"key": key, "offset": offset})
    return [exchange_row(r, "x_") for r in await cur.fetchall() if r["x_id"] is not None]


async def read_shipped(conn: Any, key: str, offset: int) -> list[Exchange]:
    cur = await conn.execute(sql.STATE_AND_WINDOW, {"key": key, "offset": offset})
    row = await cur.fetchone()
    return [exchange_of_json(x) for x in (row["exchanges"] if row else None) or ()]


ARMS: tuple[tuple[str, Reader], ...] = (
    ("previous (row per exchange)", read_previous),
    ("shipped (one row)", read_shipped),
)


async def fill(url: str, chats: int, turns: int) -> list[str]:
    """`chats` chats of `turns` turns through the real handler; their keys."""
    app = await build_app(bench_settings(url, db_pool_size=1), FastChat())
    keys = [f"whatsapp:{700_000 + n}" for n in range(chats)]
    try:
        for turn in range(turns):
            for n, key in enumerate(keys):
                text = f"hola, sigo con el pedido #{n}-{turn}, la factura {turn} no me llega"
                inbound = Inbound(SessionKey.parse(key), text, f"m{n}.{turn}", ts(turn), key)
                assert await app.handler.handle(inbound), "every turn gets a reply"
        await app.handler.drain()
    finally:
        await app.aclose()
    return keys


async def measure(
    url: str, keys: Sequence[str], reads: int, rounds: int, window: int
) -> dict[str, tuple[float, float]]:
    """Per arm, the worker's and the server's CPU per read (µs), best round of each."""
    out: dict[str, tuple[float, float]] = {}
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row, prepare_threshold=0
    ) as conn:
        row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
        backend = int(row["pid"]) if row else 0
        offset = window - 1
        for key in keys:  # the same exchanges both ways, and every statement prepared
            if await read_previous(conn, key, offset) != await read_shipped(conn, key, offset):
                raise SystemExit(f"the two statements disagree on {key}")
        for _ in range(rounds):
            for name, read in ARMS:
                cpu, server = time.process_time(), process_cpu_s(backend)
                for i in range(reads):
                    await read(conn, keys[i % len(keys)], offset)
                worker = (time.process_time() - cpu) / reads * 1e6
                backend_us = (process_cpu_s(backend) - server) / reads * 1e6
                best = out.get(name, (worker, backend_us))
                out[name] = (min(best[0], worker), min(best[1], backend_us))
    return out


async def run(url: str, args: argparse.Namespace) -> list[Target]:
    started = time.perf_counter()
    keys = await fill(url, args.chats, args.turns)
    window = bench_settings(url).window_exchanges
    print(
        f"== postgres state read: {args.chats} chats × {args.turns} turns (window {window}), "
        f"{args.reads} reads an arm a round, best of {args.rounds} rounds "
        f"(filled in {time.perf_counter() - started:.1f} s)"
    )
    figures = await measure(url, keys, args.reads, args.rounds, window)
    (_, (w0, s0)), (_, (w1, s1)) = figures.items()
    for name, (worker, server) in figures.items():
        print(f"  {name:<30} worker {worker:6.1f} µs  server {server:6.1f} µs a read")
    print(f"  shipped ÷ previous: worker {w1 / w0:.2f}×, server {s1 / s0 if s0 else 0:.2f}×")
    return []  # printed figures: issue 29 sets no target for this one


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chats", type=int)
    parser.add_argument("--turns", type=int)
    parser.add_argument("--reads", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--url", help="an existing PostgreSQL database (emptied first)")
    parser.add_argument("--quick", action="store_true", help="4 chats × 8 turns, 200 reads")
    args = parser.parse_args(argv)
    # --quick sets only what is not given explicitly
    chats, turns, reads, rounds = (4, 8, 200, 1) if args.quick else (20, 14, 2000, 3)
    args.chats = args.chats or chats
    args.turns = args.turns or turns
    args.reads = args.reads or reads
    args.rounds = args.rounds or rounds
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
