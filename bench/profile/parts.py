"""The event loop's CPU a turn in its parts, and what those parts decided.

    python -m bench.profile.parts [--chats S] [--turns T] [--out FILE]

`bench.overhead`'s one-at-a-time turns (S chats × T turns, zero-latency model, database
on disk), each turn's folds drained before the next so every run sees the same states.
Each part is timed by the event loop thread's CPU (`time.thread_time`) where it runs:
the topic check (`engine.topic`), recall's query (`search_terms`), its search (the
store's `recall`, in memory once a key is held) and the request's plan (`engine._plan`,
the recall block's rendering included). Printed: each part's CPU a turn and its p50 per
call, the process's CPU a turn, and a digest of every topic decision (action, reason,
signals) and every search's hits (ids, scores, matched terms): two trees printing the
same digests decided the same on these turns. `--out` writes them as JSON, for a diff.

Sampling (`bench.profile`) says who owns a turn; this says how much a part costs, to the
microsecond, without a profiler's overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import memory.engine
from bench import overhead
from bench.common import FastChat, bench_settings, build_app, quiet_logs, ts
from bot.conversation.inbound import Inbound
from memory.fold.offload import ProcessFoldRunner
from memory.recall.port import RecallIndex, RecallQuery
from memory.recall.rank import Hit
from memory.types import SessionKey, TopicDecision, TurnState

Spent = dict[str, list[int]]  # part: thread CPU of each call, ns


class _Recall:
    """The store's recall index, its searches timed and their hits recorded."""

    def __init__(self, inner: RecallIndex, spent: Spent, hits: list[object]) -> None:
        self.inner, self.spent, self.hits = inner, spent, hits

    async def recall(self, query: RecallQuery) -> list[Hit]:
        started = time.thread_time_ns()
        found = await self.inner.recall(query)
        self.spent["search"].append(time.thread_time_ns() - started)
        self.hits.append([[h.exchange.id, h.score, list(h.matched), h.previous] for h in found])
        return found

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        return await self.inner.recall_index_size(key)


def _timed(part: str, fn: Callable[..., Any], spent: Spent) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[part].append(time.thread_time_ns() - started)

    return timed


async def run(chats: int, turns: int) -> tuple[float, Spent, dict[str, list[object]]]:
    """(process CPU a turn, each part's calls, the decisions and hits)."""
    texts = overhead.messages(chats, turns, 7)
    spent: Spent = defaultdict(list)
    seen: dict[str, list[object]] = {"decisions": [], "hits": []}
    folder = Path(tempfile.mkdtemp(prefix="ventana-parts-"))
    app = await build_app(bench_settings(folder / "v.db", window_exchanges=6), FastChat())
    engine, check = app.engine, app.engine.topic

    async def topic(state: TurnState, message: str, now: datetime) -> TopicDecision:
        started = time.thread_time_ns()
        decision = await check(state, message, now)
        spent["topic"].append(time.thread_time_ns() - started)
        signals = sorted(decision.signals.items())
        seen["decisions"].append([decision.action, decision.reason, repr(signals)])
        return decision

    engine.topic = topic
    assert engine.recall is not None, "the bench's store has a recall index"
    engine.recall = _Recall(engine.recall, spent, seen["hits"])
    engine._plan = _timed("plan", engine._plan, spent)  # type: ignore[method-assign]
    search_terms = memory.engine.search_terms
    memory.engine.search_terms = _timed("query", search_terms, spent)
    try:
        if isinstance(app.folds.runner, ProcessFoldRunner):
            await app.folds.runner.start()
        started = time.process_time()
        for t in range(turns):
            for s in range(chats):
                key = f"telegram:{1000 + s}"
                inbound = Inbound(SessionKey.parse(key), texts[s][t], f"u{t}", ts(t), key)
                assert await app.handler.handle(inbound), "every turn gets a reply"
                await app.folds.drain()
        cpu = (time.process_time() - started) / (chats * turns)
    finally:
        memory.engine.search_terms = search_terms
        await app.aclose()
    return cpu, spent, seen


def digest(items: Sequence[object]) -> str:
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()[:12]


def report(cpu: float, spent: Spent, seen: dict[str, list[object]], turns: int) -> None:
    print(f"== parts: {turns} turns, process CPU {cpu * 1e3:.3f} ms a turn")
    for part in ("topic", "query", "search", "plan"):
        calls = spent.get(part, [])
        if calls:
            p50 = statistics.median(calls) / 1e3
            print(f"  {part:<7} {sum(calls) / turns / 1e6:.3f} ms a turn   p50 {p50:.0f} µs")
    print(f"  decisions {digest(seen['decisions'])}   hits {digest(seen['hits'])}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chats", type=int, default=20)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--out", type=Path, help="the decisions and hits, as JSON")
    args = parser.parse_args(argv)
    quiet_logs()
    cpu, spent, seen = asyncio.run(run(args.chats, args.turns))
    report(cpu, spent, seen, args.chats * args.turns)
    if args.out:
        args.out.write_text(json.dumps(seen), encoding="utf-8")


if __name__ == "__main__":
    main()
