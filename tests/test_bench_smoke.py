"""Smoke tests of the benchmarks: each core function in a tiny configuration (seconds)."""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
from pathlib import Path

import pytest

from bench import concurrency, growth, overhead, tokens
from bench.common import Target, percentile
from bench.seed import SeedSession, seed
from bench.transcripts import EARLY_FACTS, long_support

HAS_AGENTS = importlib.util.find_spec("agents") is not None


def test_transcript_is_long_deterministic_and_plants_early_facts() -> None:
    """300+ turns, same text every time, every early fact said in the opening turns."""
    turns = long_support(320)
    assert len(turns) == 320
    assert turns == long_support(320)
    opening = " ".join(t.user + " " + t.reply for t in turns[:10])
    assert all(fact in opening for fact in EARLY_FACTS)


def test_percentile_nearest_rank() -> None:
    """p50 and p99 of a small list are values of the list."""
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0] * 99 + [5.0], 99) == 1.0
    assert percentile([], 50) == 0.0


def test_seed_writes_sessions_exchanges_and_summaries(tmp_path: Path) -> None:
    """The seeded file has the store's schema, the rows asked for and a checkpoint."""
    db = tmp_path / "seed.db"
    count = seed(db, [SeedSession("telegram:1", 20, pending=2), SeedSession("telegram:2", 3)])
    assert count == 23
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM exchanges").fetchone() == (23,)
        assert conn.execute("SELECT checkpoint FROM summaries").fetchall() == [(12,)]


async def test_overhead_measures_ours_and_theirs() -> None:
    """Both sides run the same turns; the ratio is reported when agents is installed."""
    result = await overhead.measure(2, 3, 1, compare=HAS_AGENTS)
    assert result.ours.turns == 6
    assert len(result.ours.per_turn_s) == 6
    assert (result.theirs is not None) == HAS_AGENTS
    targets = overhead.report(result)
    assert all(isinstance(t, Target) for t in targets)


async def test_growth_compares_two_sizes() -> None:
    """Two seeded sizes, per-turn times for each and a ratio target."""
    result = await growth.measure(200, 2000, 4, 1)
    assert result.big.messages == 2000
    assert result.small.messages == 200
    [target] = growth.report(result)
    assert target.value == pytest.approx(result.p50_ratio)


async def test_concurrency_reports_efficiency_and_fold_ratio() -> None:
    """A tiny burst with a slow fake model: efficiency and fold ratio are reported."""
    result = await concurrency.measure(5, 0.05, 0.1)
    assert len(result.burst.latencies) == 5
    assert result.fold_calls > 0
    assert 0 < result.efficiency <= 1.0
    assert len(concurrency.report(result)) == 2


async def test_tokens_reports_per_turn_and_totals() -> None:
    """Per-turn prompt and full-history tokens, fold-ins counted, facts checked."""
    result = await tokens.run(long_support(20))
    assert len(result.prompt) == len(result.full) == 20
    assert result.prompt[0] == result.full[0]
    assert result.fold_in[-1] > 0
    assert result.facts_total == len(EARLY_FACTS)
    assert tokens.report(result, "off") == []


def test_bench_main_runs_without_a_running_loop() -> None:
    """Benchmarks create their own loop; none is left running."""
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
