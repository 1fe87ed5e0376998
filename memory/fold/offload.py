"""Where a fold's CPU runs: on the event loop, or in a worker process.

The offline fold (extractive summary, fact guard, one retry) is pure-Python CPU, 5-20 ms
for a batch of 4 exchanges, that holds the interpreter lock throughout (the regexes and
the BPE counter do not release it): in a thread it still stalls the loop every switch
interval, so it goes to a process. `ProcessFoldRunner` runs it in a pool of spawned
processes (spawn: the bot's own threads are not forked), started at the first offline
fold, closed by `aclose`; the worker runs the very same `fold_text` over the same inputs
with the same tokenizer, so the summary is byte-identical to a fold on the loop. A fold
the worker cannot reproduce (a model summarizer, which is a network wait and stays on the
loop; a tokenizer other than the default) runs on the loop as before. Store reads and
writes never leave the loop: only text goes to the worker and comes back. The worker's
caches are its own, so it reads again texts the loop had already read (a message's
tokens): more CPU in total (docs/benchmarks.md), for a loop that no fold stalls. The facts
the loop read in the messages go with the job (`memory.facts.handover`).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any, Protocol, TypeVar

import structlog

from memory.facts import IDENTITY_KINDS, Fact, extract_facts, handover
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.summarizer import FoldOutcome, Summarizer, fold_text
from memory.tokens import Tokenizer, default_tokenizer
from memory.types import Exchange

log = structlog.get_logger(__name__)
T = TypeVar("T")
PINNED_KINDS = IDENTITY_KINDS | {"amount", "date"}


class FoldRunner(Protocol):
    """Runs `fold_text` for the fold service; `cpu_s`: CPU spent outside this process."""

    cpu_s: float

    async def fold(
        self,
        summarizer: Summarizer,
        previous: str,
        batch: Sequence[Exchange],
        *,
        language: str,
        cap_tokens: int,
        tokenizer: Tokenizer,
        opening: Sequence[Exchange],
    ) -> FoldOutcome: ...

    async def aclose(self) -> None: ...


class InlineFoldRunner:
    """Every fold on the event loop (tests, and `VENTANA_FOLD_WORKERS=0`)."""

    cpu_s = 0.0

    async def fold(
        self,
        summarizer: Summarizer,
        previous: str,
        batch: Sequence[Exchange],
        *,
        language: str,
        cap_tokens: int,
        tokenizer: Tokenizer,
        opening: Sequence[Exchange],
    ) -> FoldOutcome:
        return await fold_text(
            summarizer,
            previous,
            batch,
            language=language,
            cap_tokens=cap_tokens,
            tokenizer=tokenizer,
            pinned=pinned_facts(opening),
        )

    async def aclose(self) -> None:
        return None


class ProcessFoldRunner(InlineFoldRunner):
    """Offline folds in `workers` processes; anything else on the loop (see the module)."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self.cpu_s = 0.0  # the workers' CPU on folds (a bench adds it to the process's)
        self._pool: ProcessPoolExecutor | None = None
        self._inline = False  # set when a worker cannot count tokens as we do

    async def fold(
        self,
        summarizer: Summarizer,
        previous: str,
        batch: Sequence[Exchange],
        *,
        language: str,
        cap_tokens: int,
        tokenizer: Tokenizer,
        opening: Sequence[Exchange],
    ) -> FoldOutcome:
        inline = partial(
            super().fold, summarizer, previous, batch,
            language=language, cap_tokens=cap_tokens, tokenizer=tokenizer, opening=opening,
        )  # fmt: skip
        if self._inline or not offloadable(summarizer, tokenizer):
            return await inline()
        job = (summarizer.name, tokenizer.name, previous, tuple(batch), tuple(opening))
        # The facts the loop read in the messages (its topic check and recall did), not
        # read again in the worker; replies the loop never read stay the worker's to read.
        known = handover.to_give(e.user_text for e in batch)
        try:
            future = self._started().submit(offline_fold, *job, language, cap_tokens, known)
            done = await asyncio.wrap_future(future)
        except BrokenProcessPool:
            # A worker died (killed, out of memory): this fold runs here, the next ones in
            # a new pool.
            log.warning("fold_worker_lost")
            self._discard()
            return await inline()
        if done is None:  # the worker's tokenizer is not ours: stay on the loop from now
            log.warning("fold_worker_tokenizer_differs")
            self._inline = True
            return await inline()
        outcome, spent = done
        self.cpu_s += spent
        return outcome

    async def start(self) -> None:
        """Start the workers now and wait until they are ready (else: at the first fold)."""
        pool = self._started()
        await asyncio.gather(
            *(asyncio.wrap_future(pool.submit(_ready)) for _ in range(self.workers))
        )

    async def aclose(self) -> None:
        """Stop the workers: queued folds are cancelled, a running one is let finish (a
        fold's CPU is milliseconds) and the processes are joined, so none outlives us."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init)
        return self._pool

    def _discard(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def offloadable(summarizer: Summarizer, tokenizer: Tokenizer) -> bool:
    """True when a worker process can run this fold exactly as the loop would: the
    extractive summarizer over the default tokenizer (which a worker builds alike)."""
    default = default_tokenizer()
    return (
        type(summarizer) is ExtractiveSummarizer
        and summarizer.tokenizer is default
        and tokenizer is default
    )


def offline_fold(
    name: str,
    tokenizer_name: str,
    previous: str,
    batch: tuple[Exchange, ...],
    opening: tuple[Exchange, ...],
    language: str,
    cap_tokens: int,
    known: handover.Given = (),
) -> tuple[FoldOutcome, float] | None:
    """In the worker: the extractive fold and the CPU it took; None when this process's
    tokenizer is not the caller's (its BPE data failed to load here only). `known`: the
    facts the caller read in some of the texts, taken as read here for this fold."""
    started = time.process_time()
    tokenizer = default_tokenizer()
    if tokenizer.name != tokenizer_name:
        return None
    summarizer = ExtractiveSummarizer(tokenizer, name=name)
    handover.give(known)
    try:
        outcome = run_to_end(
            fold_text(
                summarizer,
                previous,
                batch,
                language=language,
                cap_tokens=cap_tokens,
                tokenizer=tokenizer,
                pinned=pinned_facts(opening),
            )
        )
    finally:
        handover.forget_given()
    return outcome, time.process_time() - started


def pinned_facts(opening: Sequence[Exchange]) -> frozenset[Fact]:
    """Facts from the opening of the episode (its first signal exchanges): where a
    customer says who they are and gives the order number, the contact details and the
    amounts the whole case hangs on. Incidental values (a time, a percentage) are not
    pinned."""
    return frozenset(
        fact
        for ex in opening
        for fact in extract_facts(ex.user_text) + extract_facts(ex.reply_text)
        if fact.kind in PINNED_KINDS
    )


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (the extractive summarizer awaits
    nothing): no event loop needed in the worker."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("an offline fold suspended")


def _init() -> None:
    """A worker's start. Ctrl-C reaches the whole process group, but stopping the worker
    is its parent's call (`aclose`); a parent killed outright (it never called `aclose`)
    takes the worker with it; the BPE tables load now, not inside the first fold. Then
    what start-up loaded (modules, the BPE tables) is frozen out of the cyclic collector's
    walks, as in the bot's own process (`bot.app.freeze_startup`): it lives as long as
    the worker, and each full collection walked all of it between folds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        watch = threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True)
        watch.start()
    default_tokenizer().count("warm-up")
    gc.collect()  # the start-up's garbage is freed, not frozen
    gc.freeze()


def _exit_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])  # readable: the parent is gone
    os._exit(0)


def _ready() -> None:
    """Returns once a worker has run `_init`."""
