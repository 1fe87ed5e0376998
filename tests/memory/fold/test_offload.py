"""The offline fold in a worker process: the same summaries, a free loop, no stray process."""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.facts import Fact, facts_of, handover
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.offload import FoldRunner, InlineFoldRunner, ProcessFoldRunner, offline_fold
from memory.fold.service import FoldService
from memory.fold.summarizer import FoldOutcome, ModelSummarizer
from memory.store.sqlite.store import SQLiteStore
from memory.store.turns import NewExchange
from memory.types import Exchange
from tests.memory.fold.fold_support import TOKENIZER, ex, long_case, scripted

SUMMARIZER = ExtractiveSummarizer(TOKENIZER)
T0 = datetime(2026, 7, 1, tzinfo=UTC)


@pytest.fixture
async def runner() -> AsyncIterator[ProcessFoldRunner]:
    runner = ProcessFoldRunner(1)
    await runner.start()
    try:
        yield runner
    finally:
        await runner.aclose()


def children() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


async def fold_with(
    runner: FoldRunner, previous: str, batch: Sequence[Exchange], cap: int = 800
) -> FoldOutcome:
    return await runner.fold(
        SUMMARIZER,
        previous,
        batch,
        language="es",
        cap_tokens=cap,
        tokenizer=TOKENIZER,
        opening=long_case(0),
    )


def heavy_batch(tag: str) -> list[Exchange]:
    """160 long exchanges never seen before (`tag`): a fold of tens of ms of CPU (80 read
    as 29 ms once the fact scan got faster, under the test's 30 ms bar for "heavy")."""
    base = long_case(160)[2:]
    return [
        ex(e.id, f"{e.user_text} {e.reply_text} ({tag})", f"{e.reply_text} {e.user_text} ({tag})")
        for e in base
    ]


async def test_a_fold_in_a_worker_is_the_fold_on_the_loop(runner: ProcessFoldRunner) -> None:
    """Fold after fold of a long case, every outcome (text, facts, counts) is equal."""
    case = long_case(40)
    here = there = ""
    for start in range(0, len(case), 4):
        batch = case[start : start + 4]
        inline = await fold_with(InlineFoldRunner(), here, batch)
        offloaded = await fold_with(runner, there, batch)
        assert offloaded == inline
        here, there = inline.text, offloaded.text
    assert runner.cpu_s > 0  # the worker did the work


async def test_the_loop_stays_responsive_during_a_heavy_offline_fold(
    runner: ProcessFoldRunner,
) -> None:
    """A ticker's worst lag while one heavy fold runs: on the loop it is the fold's
    whole CPU; with the worker the loop keeps ticking."""

    async def worst_lag(fold: asyncio.Task[FoldOutcome]) -> float:
        worst = 0.0
        while not fold.done():
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - started - 0.001)
        await fold
        return worst

    inline = InlineFoldRunner()
    on_loop = await worst_lag(asyncio.create_task(fold_with(inline, "", heavy_batch("a"), 4000)))
    in_worker = await worst_lag(asyncio.create_task(fold_with(runner, "", heavy_batch("b"), 4000)))
    assert on_loop > 0.03
    assert in_worker < on_loop / 3


async def test_a_worker_freezes_what_its_start_up_loaded(runner: ProcessFoldRunner) -> None:
    """A worker's modules and BPE tables are out of the collector's walks once it is up."""
    pool = runner._started()
    frozen = await asyncio.wrap_future(pool.submit(gc.get_freeze_count))
    assert frozen > 10_000, "modules and the BPE tables are frozen"


async def test_a_model_summarizer_stays_on_the_loop() -> None:
    """A model fold is a network wait: no worker process is started for it."""
    runner = ProcessFoldRunner(1)
    before = children()
    model = ModelSummarizer(scripted("El usuario pidió el pedido #4821; INC-2231."))
    try:
        outcome = await runner.fold(
            model,
            "",
            [ex(1, "Mi pedido #4821 llegó roto.", "Abrí la incidencia INC-2231.")],
            language="es",
            cap_tokens=800,
            tokenizer=TOKENIZER,
            opening=(),
        )
        assert outcome.ok
        assert children() == before
    finally:
        await runner.aclose()


async def test_aclose_stops_and_joins_the_workers() -> None:
    """No worker outlives the runner's `aclose`."""
    before = children()
    runner = ProcessFoldRunner(1)
    await fold_with(runner, "", long_case(4))
    assert children() - before
    await runner.aclose()
    assert children() == before


async def test_a_lost_worker_costs_one_fold_on_the_loop() -> None:
    """A worker killed between folds: the next fold still gives the same summary (run
    here), and the one after gets a new worker."""
    before = children()
    runner = ProcessFoldRunner(1)
    try:
        await runner.start()
        (lost,) = children() - before
        os.kill(lost, signal.SIGKILL)
        await asyncio.sleep(0.2)  # the pool notices its worker is gone
        batch = long_case(4)
        assert await fold_with(runner, "", batch) == await fold_with(InlineFoldRunner(), "", batch)
        await fold_with(runner, "", batch)
        assert children() - before - {lost}
    finally:
        await runner.aclose()
    assert children() == before


async def test_ctrl_c_leaves_stopping_the_worker_to_its_parent() -> None:
    """Ctrl-C reaches the whole process group: the worker ignores it (no traceback, no
    lost fold), and the parent's shutdown stops it."""
    before = children()
    runner = ProcessFoldRunner(1)
    try:
        await runner.start()
        (worker,) = children() - before
        os.kill(worker, signal.SIGINT)
        await asyncio.sleep(0.2)
        batch = long_case(4)
        assert await fold_with(runner, "", batch) == await fold_with(InlineFoldRunner(), "", batch)
        assert children() - before == {worker}
    finally:
        await runner.aclose()


KILLED_PARENT = """
import asyncio, multiprocessing, os, signal
from memory.fold.offload import ProcessFoldRunner

async def main():
    await ProcessFoldRunner(1).start()
    print(*(p.pid for p in multiprocessing.active_children()), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

if __name__ == "__main__":
    asyncio.run(main())
"""


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan is reaped by whoever adopts it, maybe never)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_a_worker_does_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    """A bot killed with -9 never calls `aclose`: its fold worker exits by itself."""
    script = tmp_path / "parent.py"
    script.write_text(KILLED_PARENT)
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
        check=False,
    )
    (worker,) = (int(pid) for pid in done.stdout.split())
    for _ in range(100):
        if not running(worker):
            break
        await asyncio.sleep(0.05)
    assert not running(worker)


async def test_a_cancelled_fold_leaves_the_worker_usable(runner: ProcessFoldRunner) -> None:
    """Cancelling a fold while the worker runs it (a sync fold past its deadline) raises
    in the caller only; the next fold is answered, with its own inputs."""
    task = asyncio.create_task(fold_with(runner, "", heavy_batch("c"), 4000))
    await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    batch = long_case(4)
    assert await fold_with(runner, "", batch) == await fold_with(InlineFoldRunner(), "", batch)


async def test_fold_service_folds_in_its_runner_and_aclose_stops_it() -> None:
    """A background fold through the service lands in the store, its CPU in the worker;
    the service's `aclose` (the app's shutdown) then stops the worker."""
    before = children()
    store = await SQLiteStore.open(":memory:")
    runner = ProcessFoldRunner(1)
    folds = FoldService(
        store, SUMMARIZER, TOKENIZER,
        window=1, fold_batch=2, summary_tokens=400, language="es", runner=runner,
    )  # fmt: skip
    try:
        state = await store.turn_state("console:c1", 1, T0)
        for e in long_case(2):
            await store.record_exchange(
                NewExchange(
                    state.session_id, state.episode.id, e.user_text, e.reply_text, True, None, T0
                )
            )
        folds.request("console:c1")
        await folds.drain()
        folded = await store.peek_state("console:c1", 1)
        assert folded is not None
        assert folded.summary is not None
        assert "#PED-48213" in folded.summary.text
        assert runner.cpu_s > 0
        assert children() - before
    finally:
        await folds.aclose()
        await store.close()
    assert children() == before


def test_a_worker_fold_given_the_messages_facts_is_the_same_fold() -> None:
    """Fold after fold, the messages' facts handed over (none read again) give the same
    outcome, and nothing given outlives its fold."""
    case, opening = long_case(40), tuple(long_case(0))
    previous = ""
    for start in range(0, len(case), 4):
        batch = tuple(case[start : start + 4])
        job = (SUMMARIZER.name, TOKENIZER.name, previous, batch, opening, "es", 800)
        read = offline_fold(*job)  # reads every text, the messages among them
        known = handover.to_give(e.user_text for e in batch)
        assert [text for text, _ in known] == list(dict.fromkeys(e.user_text for e in batch))
        facts_of.cache_clear()  # as in a worker that never read these messages
        given = offline_fold(*job, known)
        assert read is not None
        assert given is not None
        assert given[0] == read[0]
        assert not handover._given
        previous = read[0].text


def test_given_facts_are_taken_as_read() -> None:
    """A text handed over with its facts is not read again: `facts_of` answers what was
    given, once; a text never read here is not handed over."""
    text = f"pedido PED-1 ({uuid.uuid4().hex})"
    assert handover.to_give([text]) == ()
    facts_of.cache_clear()
    handover.give(((text, (("id", "GIVEN-1", "pedido"),)),))
    try:
        assert facts_of(text) == (Fact("id", "GIVEN-1", "pedido"),)
        assert handover.to_give([text]) == ((text, (("id", "GIVEN-1", "pedido"),)),)
    finally:
        handover.forget_given()
        facts_of.cache_clear()
    assert facts_of(text)[0] == Fact("id", "PED-1", "pedido")  # read anew
