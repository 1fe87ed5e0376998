"""One turn of the memory engine: topic check, assembly within budget, the model call,
the noise filter and the stored exchange. Channel-agnostic; no user-facing wording.

Resets are soft (`memory.soft_reset`): a message that continues the case a recent
automatic reset closed reverts that reset, one naming the case a reset would close vetoes
it; while the previous case is in play, its facts ride in their own block and recall
searches its exchanges too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol

import structlog

from memory import noise
from memory.carry_over import carry_over_block
from memory.episodes import Episodes
from memory.fold.service import FoldService
from memory.policy import Assembly, FoldFirst, Parts, TooLarge, assemble, plan_request
from memory.recall.block import Costs, render
from memory.recall.dense import query_vector
from memory.recall.port import RecallIndex, RecallQuery
from memory.recall.rank import LIMIT as RECALL_LIMIT
from memory.recall.rank import Hit
from memory.recall.related import search_terms
from memory.soft_reset import turn as soft_reset
from memory.soft_reset.block import InPlay
from memory.store.episodes import EpisodeStore
from memory.store.turns import NewExchange, TurnStore
from memory.tokens import Tokenizer, UsageCalibration
from memory.topic.decide import TopicCheck
from memory.turn import (
    NO_MESSAGE,
    EngineConfig,
    Outcome,
    Prepared,
    Preview,
    TurnObserver,
    no_topic_check,
)
from memory.types import Exchange, TopicDecision, TurnState
from providers.base import ChatModel, ChatReply, ChatRequest, ContextTooLong, ProviderError
from providers.streaming import TextSink, complete_streaming

log = structlog.get_logger(__name__)
MAX_SYNC_FOLDS = 3

# The turn's value types live in memory/turn.py; they are imported from here as before.
__all__ = [
    "EngineConfig",
    "EngineStore",
    "MemoryEngine",
    "Outcome",
    "Prepared",
    "Preview",
    "TurnObserver",
    "no_topic_check",
]


class EngineStore(TurnStore, EpisodeStore, Protocol):
    """What the engine is given: the turn's store, and the episode lifecycle its
    `Episodes` runs (an automatic reset happens inside a turn)."""


class MemoryEngine:
    def __init__(
        self,
        store: EngineStore,
        chat_model: ChatModel,
        folds: FoldService,
        tokenizer: Tokenizer,
        config: EngineConfig,
        *,
        topic: TopicCheck = no_topic_check,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        recall: RecallIndex | None = None,
        observers: Sequence[TurnObserver] = (),
    ) -> None:
        self.store: TurnStore = store
        self.recall = recall if recall is not None else _recall_of(store)
        self.chat_model = chat_model
        self.folds = folds
        self.tokenizer = tokenizer
        self.config = config
        self.topic = topic
        self.clock = clock
        self.episodes = Episodes(
            store,
            folds,
            undo_within_s=config.undo_seconds,
            clock=clock,
            carry=config.reset_carry,
            language=config.language,
        )
        self.observers = tuple(observers)  # replay reports, benchmarks
        # Provider-reported usage corrects our counts upward only: budgets stay conservative.
        self.calibration = UsageCalibration(low=1.0)
        # recall counts cached raw; the calibration (replaced as usage comes in) applied live
        self.recall_costs = Costs(tokenizer.count, lambda n: self.calibration.apply(n))

    def count(self, text: str) -> int:
        """Tokens of `text` as budgets see them: our tokenizer, corrected by usage."""
        return self.calibration.apply(self.tokenizer.count(text))

    async def prepare(
        self,
        key: str,
        message: str,
        *,
        dry_run: bool | None = None,
        user: str | None = None,
        operator: bool = False,
    ) -> Prepared:
        """Topic check first, then the request, folding synchronously when over budget.

        `dry_run=None` follows the session's debug flag as it is now; a dry run is the
        `preview` of the message and writes nothing (a new session is created only when it
        is not one, and new sessions are never in debug mode). `user`: the sender; debug
        then follows that sender's own flag (per operator, not per key), and only while
        `operator` says the sender is one now: a stored flag outlives a revoked operator,
        so it alone never makes a dry run."""
        now = self.clock()
        state = await self._state(key, now, bool(dry_run))
        if dry_run is None:
            dry_run = state.debug if user is None else state.debug_for(user) and operator
        if dry_run:
            return Prepared.dry(await self._preview(key, state, message, now))
        reverted = await self._revert(state, message, False, now)
        if reverted is not None:
            state, decision = reverted
        else:
            decision = await self.topic(state, message, now)
        decision, carried = await soft_reset.vetoed(self.episodes, state, decision, message)
        if decision.reset:
            state = await self.episodes.reset_automatically(
                state, decision, window=self.config.window, at=now, carried=carried
            )
        soft = self._in_play(state, message)
        hits = await self._recall(state, message, soft)
        plan, folds = await self._fit(key, state, message, hits, soft)
        return Prepared(key, message, state, decision, plan, folds, False, 0, hits, soft)

    async def preview(self, key: str, message: str = "") -> Preview:
        """What the next request for `key` would be if `message` came now: the topic
        decision (or the revert of a reset the message continues), recall, the plan,
        token counts as budgets count them. Calls no model and writes nothing, except
        that a key never seen gets its (empty) session, as a debug dry run always did.
        Without a message there is no topic check (it is about the message) and no
        recall: the request as it stands."""
        now = self.clock()
        return await self._preview(key, await self._state(key, now, True), message, now)

    async def _preview(self, key: str, state: TurnState, message: str, now: datetime) -> Preview:
        reverted = await self._revert(state, message, True, now) if message else None
        if reverted is not None:
            state, decision = reverted
        else:
            decision = await self.topic(state, message, now) if message else NO_MESSAGE
        decision, carried = await soft_reset.vetoed(self.episodes, state, decision, message)
        if decision.reset:  # as the reset would leave it: the old episode only as its case
            carry, case = carried or await self.episodes.carried_over(state)
            episode = replace(state.episode, carry_over=carry, previous=case)
            state = replace(state, summary=None, window=(), pending=(), episode=episode)
        soft = self._in_play(state, message)
        hits = await self._recall(state, message, soft)
        plan = self._plan(state, message, hits, soft)
        as_is = plan if isinstance(plan, Assembly) else self._assemble(state, message, hits, soft)
        would = len(plan.exchanges) if isinstance(plan, FoldFirst) else 0
        shown = as_is if isinstance(plan, FoldFirst) else plan
        return Preview(key, message, state, decision, shown, as_is, would, hits, soft)

    async def _revert(
        self, state: TurnState, message: str, dry_run: bool, now: datetime
    ) -> tuple[TurnState, TopicDecision] | None:
        """The revert of a recent automatic reset this message continues, if any."""
        return await soft_reset.revert(
            self.episodes, state, message, dry_run=dry_run, window=self.config.window, at=now
        )

    def _in_play(self, state: TurnState, message: str) -> InPlay | None:
        return soft_reset.in_play_for(state, message, self.config.reset_carry)

    async def _recall(
        self, state: TurnState, message: str, soft: InPlay | None = None
    ) -> tuple[Hit, ...]:
        """The episode's older exchanges (neither pending nor in the window) the message
        is about, best first, and while the previous case is in play (`soft`) the closed
        episode's ones, ranked first; nothing when recall is off or nothing is older."""
        recent = state.pending or state.window
        previous = state.episode.previous if soft else None
        if self.recall is None or self.config.recall_tokens <= 0 or not (recent or previous):
            return ()
        query = search_terms(message)
        if not query:
            return ()
        before = recent[0].id if recent else 0  # 0: nothing of the current episode
        closed = previous.episode_id if previous else None
        vector = query_vector(message)
        episode = (state.session_id, state.episode.id)
        search = RecallQuery(*episode, query, before, RECALL_LIMIT, closed, vector, message)
        return tuple(await self.recall.recall(search))

    async def _state(self, key: str, now: datetime, dry_run: bool) -> TurnState:
        if dry_run:
            peeked = await self.store.peek_state(key, self.config.window)
            if peeked is not None:
                return peeked
        return await self.store.turn_state(key, self.config.window, now)

    async def _fit(
        self,
        key: str,
        state: TurnState,
        message: str,
        hits: tuple[Hit, ...],
        soft: InPlay | None = None,
    ) -> tuple[Assembly | TooLarge, int]:
        folds = 0
        until = time.monotonic() + self.config.sync_fold_seconds
        while True:
            plan = self._plan(state, message, hits, soft)
            if not isinstance(plan, FoldFirst):
                return plan, folds
            if folds >= MAX_SYNC_FOLDS or not await self._sync_fold(key, plan.keep_window, until):
                log.warning("over_budget_fold_failed", key=key, over_by=plan.over_by)
                budget = self.config.context_tokens
                return TooLarge(plan.over_by + budget, budget, "fold_failed"), folds
            folds += 1
            state = await self.store.turn_state(key, plan.keep_window, self.clock())

    async def _sync_fold(self, key: str, keep_window: int, until: float) -> bool:
        """A fold on the reply path, bounded (all of a turn's folds share one budget) so a
        hanging summary model cannot hold the reply past its deadline; a fold cut short
        writes nothing."""
        remaining = until - time.monotonic()
        if remaining <= 0:
            return False
        try:
            async with asyncio.timeout(remaining):
                return await self.folds.fold(key, keep_window=keep_window) is not None
        except TimeoutError:
            log.warning("sync_fold_timeout", key=key, seconds=self.config.sync_fold_seconds)
            return False

    def _parts(self, state: TurnState, message: str, soft: InPlay | None = None) -> Parts:
        """The request's parts; the carry-over is the identity block and, while the
        previous case is in play, its facts' block (within `CASE_TOKENS`, less on a small
        budget)."""
        language, budget = self.config.language, self.config.context_tokens
        identity = carry_over_block(state.episode.carry_over, language)
        case = soft_reset.case_carry(state, soft, language, self.count, budget)
        carry = "\n\n".join(block for block in (identity, case) if block)
        prompt = self.config.system_prompt
        return Parts(prompt, state.summary, state.pending, state.window, message, carry)

    def _plan(
        self,
        state: TurnState,
        message: str,
        hits: tuple[Hit, ...] = (),
        soft: InPlay | None = None,
    ) -> Assembly | FoldFirst | TooLarge:
        plan = plan_request(
            self._parts(state, message, soft),
            count=self.count,
            budget=self.config.context_tokens,
            summary_cap=self.config.summary_tokens,
            language=self.config.language,
            recall=hits,
            recall_tokens=self.config.recall_tokens,
            recall_count=self.recall_costs,
        )
        if isinstance(plan, TooLarge) and soft is not None:  # the previous case goes first
            return self._plan(state, message, hits)
        return plan

    def _assemble(
        self, state: TurnState, message: str, hits: tuple[Hit, ...], soft: InPlay | None = None
    ) -> Assembly:
        language = self.config.language
        return assemble(
            self._parts(state, message, soft),
            count=self.count,
            budget=self.config.context_tokens,
            language=language,
            recall=render(hits, self.config.recall_tokens, self.recall_costs, language),
        )

    def request_for(self, assembly: Assembly) -> ChatRequest:
        return ChatRequest(
            assembly.system,
            assembly.messages,
            self.config.reply_tokens,
            "chat",
            self.config.language,
        )

    async def call(self, prepared: Prepared, on_text: TextSink | None = None) -> Outcome:
        """Call the chat model; on context-too-long fold synchronously and retry once.
        `on_text` (optional) sees the reply grow, when the model streams."""
        assert isinstance(prepared.plan, Assembly)
        started = time.perf_counter()
        outcome = await self._attempt(prepared.plan, prepared.state, started, on_text)
        if not isinstance(outcome.error, ContextTooLong):
            return outcome
        retry = await self._after_context_too_long(prepared)
        if retry is None:
            return outcome
        retried = await self._attempt(retry, prepared.state, started, on_text)
        return replace(retried, retried=True)

    async def _attempt(
        self, assembly: Assembly, state: TurnState, started: float, on_text: TextSink | None
    ) -> Outcome:
        try:
            request = self.request_for(assembly)
            reply = await complete_streaming(self.chat_model, request, on_text)
        except ProviderError as exc:
            elapsed = time.perf_counter() - started
            return Outcome(None, exc, f"provider_error:{exc.kind}", assembly, elapsed)
        return self._classify(reply, assembly, state, started)

    async def _after_context_too_long(self, prepared: Prepared) -> Assembly | None:
        keep = max(0, len(prepared.state.window) // 2)
        await self._sync_fold(prepared.key, keep, time.monotonic() + self.config.sync_fold_seconds)
        state = await self.store.turn_state(prepared.key, keep, self.clock())
        plan = self._plan(state, prepared.message, prepared.recall, prepared.soft)
        return plan if isinstance(plan, Assembly) else None

    def _classify(
        self, reply: ChatReply, assembly: Assembly, state: TurnState, started: float
    ) -> Outcome:
        reason = noise.classify(reply, previous_reply=state.last_reply)
        raw = round(assembly.total_tokens / self.calibration.factor)
        self.calibration = self.calibration.observe(raw, reply.usage.input_tokens)
        return Outcome(reply, None, reason, assembly, time.perf_counter() - started)

    async def record(
        self,
        prepared: Prepared,
        outcome: Outcome,
        *,
        shown: tuple[str, ...],
        inbox_id: int | None = None,
        external_id: str | None = None,
    ) -> Exchange:
        """Store the exchange (signal or noise with its reason) and mark the inbox entry
        answered in the same transaction; then schedule a fold if enough is pending."""
        reply = outcome.reply
        exchange = await self.store.record_exchange(
            NewExchange(
                session_id=prepared.state.session_id,
                episode_id=prepared.state.episode.id,
                user_text=prepared.message,
                reply_text=reply.text if reply else "",
                signal=outcome.signal,
                noise_reason=outcome.noise_reason,
                created_at=self.clock(),
                stop_reason=reply.stop_reason if reply else "error",
                prompt_tokens=outcome.assembly.total_tokens,
                reply_tokens=reply.usage.output_tokens if reply else 0,
                external_id=external_id,
                topic=prepared.decision,
                inbox_id=inbox_id,
                replies=shown,
                model=answered_by(self.chat_model.name, reply.model) if reply else "",
                usage=reply.usage if reply else None,
            )
        )
        pending_after = len(outcome.assembly.pending) + (
            1 if outcome.signal and len(outcome.assembly.window) >= self.config.window else 0
        )
        for observe in self.observers:
            observe(prepared, outcome, exchange)
        if pending_after >= self.config.fold_batch:
            self.folds.request(prepared.key)
        return exchange


def answered_by(spec: str, reported: str) -> str:
    """`provider:model` as the provider reported it (`anthropic:claude-…-20250929`)."""
    provider, _, configured = spec.partition(":")
    if not configured or reported.startswith(f"{provider}:"):  # offline, scripted models
        return reported or spec
    return f"{provider}:{reported or configured}"


def _recall_of(store: TurnStore) -> RecallIndex | None:
    """The store's own recall index, when it has one."""
    return store if isinstance(store, RecallIndex) else None
