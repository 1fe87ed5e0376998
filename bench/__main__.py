"""`make bench`: every benchmark in one run, then a table of targets (PASS/MISS).

    python -m bench [--quick]

Each figure is printed next to a baseline measured in the same run. `--quick` runs every
benchmark in a small configuration (a smoke run, not figures to quote).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Sequence

from bench import (
    blind,
    concurrency,
    facts,
    growth,
    overhead,
    profile,
    recall,
    tokens,
    topic_tiage,
    topics,
    workers,
)
from bench.common import Target
from bench.postgres import recall as postgres_recall
from bench.recall import public as recall_public
from bench.topic_model import cost as topic_cost


def _tiage(argv: list[str]) -> list[Target]:
    if topic_tiage.DEFAULT_DATA.exists():
        return topic_tiage.main([])
    print(f"== topic (TIAGE): data not found at {topic_tiage.DEFAULT_DATA}, skipped")
    return []


def _topic_cost(argv: list[str]) -> list[Target]:
    if topic_tiage.DEFAULT_DATA.exists():
        return topic_cost.main(argv)
    print(f"== topic cost: TIAGE not found at {topic_tiage.DEFAULT_DATA}, skipped")
    return []


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    flags = ["--quick"] if args.quick else []
    benches: list[tuple[str, Callable[[list[str]], list[Target]]]] = [
        ("tokens", tokens.main),
        ("facts", facts.main),
        ("overhead", overhead.main),
        ("profile", profile.main),
        ("growth", growth.main),
        ("recall", recall.main),
        ("recall public", recall_public.main),
        ("concurrency", concurrency.main),
        ("topic", _tiage),
        ("topics", topics.main),
        ("blind", blind.main),
        ("topic cost", _topic_cost),
        ("workers", workers.main),
        ("postgres recall", postgres_recall.main),
    ]
    targets: list[Target] = []
    for name, run in benches:
        gc.collect()  # each benchmark starts clean, not with the previous one's garbage
        started = time.perf_counter()
        targets += run(flags)
        print(f"   ({name}: {time.perf_counter() - started:.1f} s)\n")
    print("== summary")
    for target in targets:
        print("  " + target.line())
    passed = sum(t.passed for t in targets)
    print(f"  {passed}/{len(targets)} targets met")


if __name__ == "__main__":
    main()
