"""Fold-in: the summary model rewrites *previous summary + pending* into a new version.

Runs off the reply path, one fold at a time per key, coalescing requests that arrive
while one runs, at most `concurrency` background folds at once across keys (folds the
budget needs right now do not wait for a slot). The store writes text, version and
checkpoint in one transaction and only on top of the version the fold started from, so a
fold is idempotent, a failed or stale fold changes nothing, and a fold racing a reset or
a forget writes nothing back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import structlog

from memory.fold.offload import FoldRunner, InlineFoldRunner
from memory.fold.summarizer import Summarizer
from memory.store.summaries import NewSummary, SummaryStore
from memory.tokens import Tokenizer
from memory.types import Exchange, SummaryVersion, TurnState
from providers.base import ProviderError

log = structlog.get_logger(__name__)
REBUILD_BATCH = 24  # exchanges per summarizer call when rebuilding from raw
FAILURE_COOLDOWN_S = 30.0  # after a summary-model error, background folds pause this long
PIN_EXCHANGES = 10  # the opening exchanges whose facts are pinned in the summary


Failure = Literal["model_failed", "rejected"]


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What a rebuild did: the version written, or why not (`detail`: the model error's
    kind, the guard's reason); `current`: the summary version now (after a lost race,
    the one the other fold wrote)."""

    version: SummaryVersion | None
    cause: Literal["written", "unknown_key", "nothing_pending", "lost_race"] | Failure
    detail: str = ""
    current: int = 0


@dataclass(frozen=True, slots=True)
class _Draft:
    text: str
    input_tokens: int
    output_tokens: int
    dropped: tuple[str, ...]


class FoldService:
    def __init__(
        self,
        store: SummaryStore,
        summarizer: Summarizer,
        tokenizer: Tokenizer,
        *,
        window: int,
        fold_batch: int,
        summary_tokens: int,
        language: str,
        concurrency: int = 16,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        runner: FoldRunner | None = None,
    ) -> None:
        self.store = store
        self.summarizer = summarizer
        self.tokenizer = tokenizer
        self.window = window
        self.fold_batch = fold_batch
        self.summary_tokens = summary_tokens
        self.language = language
        self.clock = clock
        # Where `fold_text`'s CPU runs (`memory/fold/offload.py`): the loop unless given.
        self.runner: FoldRunner = runner or InlineFoldRunner()
        self.calls = 0  # summarizer calls, for reports
        self.input_tokens = 0
        self.output_tokens = 0
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._cooldown_until = 0.0  # monotonic; one value, not one per key
        # Background folds are spread out rather than started all at once: a burst of
        # replies would otherwise start a burst of folds whose bookkeeping competes with
        # the next replies (and a burst of summary-model calls meets its rate limit).
        self._slots = asyncio.Semaphore(concurrency)

    # -- background -------------------------------------------------------------------

    def request(self, key: str) -> None:
        """Fold `key` in the background when enough is pending; coalesces repeats.

        While the summary model is failing, background requests are skipped for a short
        cooldown (pending exchanges keep going to the chat model verbatim meanwhile);
        synchronous folds for the budget still try."""
        if time.monotonic() < self._cooldown_until:
            return
        if key in self._running:
            self._again.add(key)
            return
        task = asyncio.get_running_loop().create_task(self._loop(key), name=f"fold:{key}")
        self._running[key] = task
        task.add_done_callback(lambda _t: self._running.pop(key, None))

    async def _loop(self, key: str) -> None:
        while True:
            try:
                async with self._slots:
                    self._again.discard(key)  # what arrived while waiting is covered now
                    await self.fold(key, only_if_due=True)
            except Exception:  # a background fold must never take the bot down
                log.exception("fold_crashed", key=key)
            if key not in self._again:
                return

    async def drain(self) -> None:
        """Wait for every background fold (tests, replay, shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def forget(self, key: str) -> None:
        """Stop a running fold of `key` before its rows are erased (it could not write
        anyway: the store refuses a summary for an episode that no longer exists)."""
        self._again.discard(key)
        task = self._running.get(key)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel the background folds (nothing half-written: the store writes a fold in
        one transaction), then stop the runner's workers."""
        try:
            for task in list(self._running.values()):
                task.cancel()
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)
        finally:
            await self.runner.aclose()

    # -- one fold -----------------------------------------------------------------------

    async def fold(
        self, key: str, *, keep_window: int | None = None, only_if_due: bool = False
    ) -> SummaryVersion | None:
        """Fold what is pending (with the window cut to `keep_window` when given)."""
        async with self._key_lock(key):
            peeked = await self.store.peek_for_fold(
                key,
                self.window if keep_window is None else keep_window,
                PIN_EXCHANGES,
            )
            if peeked is None:
                return None
            state, opening = peeked
            stale = state.summary is not None and (
                state.summary.prompt_version != self.summarizer.prompt_version
            )
            if stale:
                return await self._rebuild(state)
            if not state.pending or (only_if_due and len(state.pending) < self.fold_batch):
                return None
            previous = state.summary.text if state.summary else ""
            draft = await self._summarize(key, previous, state.pending, opening)
            return None if draft is None else await self._write(state, draft, state.pending)

    async def rebuild(self, key: str) -> SummaryVersion | None:
        """Rebuild the current episode's summary from raw exchanges (`ventana resummarize`)."""
        return (await self.rebuild_report(key, attempts=1)).version

    async def rebuild_report(
        self, key: str, *, attempts: int = 3, backoff_s: float = 0.2
    ) -> Rebuilt:
        """`rebuild` with the real cause when nothing is written, retried when another fold
        (the bot's own, in another process: our key lock is per process) wrote first."""
        result = Rebuilt(None, "unknown_key")
        for attempt in range(attempts):
            async with self._key_lock(key):
                state = await self.store.peek_state(key, self.window)
                if state is None:
                    return Rebuilt(None, "unknown_key")
                result = await self._rebuild_why(state)
                if result.cause == "lost_race":
                    now = await self.store.peek_state(key, self.window)
                    current = now.summary.version if now and now.summary else 0
                    result = Rebuilt(None, "lost_race", current=current)
            if result.cause != "lost_race" or attempt + 1 == attempts:
                return result
            log.info("rebuild_retried", key=key, attempt=attempt + 1)
            await asyncio.sleep(backoff_s * (attempt + 1))
        return result

    async def _rebuild(self, state: TurnState) -> SummaryVersion | None:
        return (await self._rebuild_why(state)).version

    async def _rebuild_why(self, state: TurnState) -> Rebuilt:
        """Fold every signal exchange older than the window from scratch, in batches."""
        current = state.summary.version if state.summary else 0
        upto = state.window[0].id if state.window else None
        exchanges = await self.store.signal_exchanges(state.episode.id, 0, upto)
        if not exchanges:
            return Rebuilt(None, "nothing_pending", current=current)
        draft = _Draft("", 0, 0, ())
        opening = await self.store.signal_exchanges(state.episode.id, 0, limit=PIN_EXCHANGES)
        for start in range(0, len(exchanges), REBUILD_BATCH):
            batch = exchanges[start : start + REBUILD_BATCH]
            step = await self._summarize_or_why(state.key, draft.text, batch, opening)
            if not isinstance(step, _Draft):
                return Rebuilt(None, step[0], detail=step[1], current=current)
            draft = _Draft(
                step.text,
                draft.input_tokens + step.input_tokens,
                draft.output_tokens + step.output_tokens,
                step.dropped,
            )
        written = await self._write(state, draft, exchanges, rebuilt=True)
        if written is None:
            return Rebuilt(None, "lost_race", current=current)
        return Rebuilt(written, "written", current=written.version)

    async def _summarize(
        self, key: str, previous: str, batch: Sequence[Exchange], opening: Sequence[Exchange]
    ) -> _Draft | None:
        step = await self._summarize_or_why(key, previous, batch, opening)
        return step if isinstance(step, _Draft) else None

    async def _summarize_or_why(
        self, key: str, previous: str, batch: Sequence[Exchange], opening: Sequence[Exchange]
    ) -> _Draft | tuple[Failure, str]:
        """The draft, or why there is none: the model failed (its error kind) or the
        fact guard rejected what it wrote (the reason). `opening`: the episode's first
        `PIN_EXCHANGES` signal exchanges, whose facts are pinned."""
        try:
            outcome = await self.runner.fold(
                self.summarizer,
                previous,
                batch,
                language=self.language,
                cap_tokens=self.summary_tokens,
                tokenizer=self.tokenizer,
                opening=opening,
            )
        except ProviderError as exc:
            log.warning("fold_failed", key=key, error=exc.kind, exchanges=len(batch))
            self._cooldown_until = time.monotonic() + FAILURE_COOLDOWN_S
            return "model_failed", exc.kind
        self.calls += outcome.calls
        self.input_tokens += outcome.input_tokens
        self.output_tokens += outcome.output_tokens
        if outcome.rejected:
            log.warning("fold_rejected", key=key, reason=outcome.rejected, exchanges=len(batch))
            return "rejected", str(outcome.rejected)
        if outcome.dropped:
            # Kinds at info, values (user data) only at debug.
            kinds = sorted({f.kind for f in outcome.dropped})
            log.info("fold_dropped_facts", key=key, dropped=len(outcome.dropped), kinds=kinds)
            log.debug("fold_dropped_values", key=key, values=[f.value for f in outcome.dropped])
        dropped = tuple(str(getattr(f, "value", f)) for f in outcome.dropped)
        return _Draft(outcome.text, outcome.input_tokens, outcome.output_tokens, dropped)

    async def _write(
        self,
        state: TurnState,
        draft: _Draft,
        exchanges: Sequence[Exchange],
        *,
        rebuilt: bool = False,
    ) -> SummaryVersion | None:
        base = state.summary.version if state.summary else 0
        checkpoint = max(exchanges[-1].id, state.summary.checkpoint if state.summary else 0)
        written = await self.store.write_summary(
            NewSummary(
                episode_id=state.episode.id,
                base_version=base,
                text=draft.text,
                checkpoint=checkpoint,
                prompt_version=self.summarizer.prompt_version,
                model=self.summarizer.name,
                source_from=exchanges[0].id,
                source_to=exchanges[-1].id,
                input_tokens=draft.input_tokens,
                output_tokens=draft.output_tokens,
                created_at=self.clock(),
                dropped_facts=draft.dropped,
            )
        )
        log.info(
            "fold_written" if written else "fold_stale",
            key=state.key,
            version=written.version if written else base,
            checkpoint=checkpoint,
            exchanges=len(exchanges),
            rebuilt=rebuilt,
        )
        return written

    # -- per-key lock that does not grow with the number of keys seen ------------------

    def _key_lock(self, key: str) -> _KeyLock:
        return _KeyLock(self._locks, key)


class _KeyLock:
    def __init__(self, table: dict[str, tuple[asyncio.Lock, int]], key: str) -> None:
        self.table = table
        self.key = key

    async def __aenter__(self) -> None:
        lock, users = self.table.get(self.key, (asyncio.Lock(), 0))
        self.table[self.key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._release_slot()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self.table[self.key][0].release()
        self._release_slot()

    def _release_slot(self) -> None:
        lock, users = self.table[self.key]
        if users <= 1:
            del self.table[self.key]
        else:
            self.table[self.key] = (lock, users - 1)
