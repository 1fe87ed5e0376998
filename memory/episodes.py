"""The episode lifecycle of a key: reset (manual or automatic), undo, forget.

Commands and the turn engine go through here rather than through the store's primitives:
a reset closes the current episode and opens a new one; undo reopens the previous one;
forget stops the key's running fold before its rows are erased, so a fold finishing late
cannot write anything back. An automatic reset keeps the case it closed with the new
episode (`PreviousCase`, `memory.soft_reset`), and `revert` undoes it as `/undo` does
when the next messages continue that case.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol

import structlog

from memory.carry_over import Pairs, carried
from memory.soft_reset.case import chained, previous_case
from memory.store.episodes import EpisodeStore, NewEpisode
from memory.types import Episode, PreviousCase, TopicDecision, TurnState

log = structlog.get_logger(__name__)


def chains(state: TurnState) -> bool:
    """An episode an automatic reset opened: a second reset carries the case before it
    on (`chained`). Not only while it is young: a wrong reset that stood (the new episode
    talked of something else for a while) leaves the case the user comes back to two
    resets behind, and a revert can only reach it through the case it keeps."""
    return (state.episode.opened_by or "").startswith("auto:")


class FoldCanceller(Protocol):
    async def forget(self, key: str) -> None: ...


class Episodes:
    def __init__(
        self,
        store: EpisodeStore,
        folds: FoldCanceller,
        *,
        undo_within_s: float = 3600.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        carry: str = "identity",
        language: str = "es",
    ) -> None:
        self.store = store
        self.language = language  # the chat's: how the closed case's facts are worded
        self.carry = carry  # what an automatic reset carries over: "identity" or "none"
        self.folds = folds
        self.undo_within_s = undo_within_s
        self.clock = clock

    async def reset(self, key: str) -> Episode:
        """The user asked for a clean slate (`/reset`): nothing carries over."""
        state = await self.store.turn_state(key, 1, self.clock())
        return await self.store.start_episode(NewEpisode(state.session_id, "manual", self.clock()))

    async def reset_automatically(
        self,
        state: TurnState,
        decision: TopicDecision,
        *,
        window: int,
        at: datetime,
        carried: tuple[Pairs, PreviousCase] | None = None,
    ) -> TurnState:
        """The topic check decided a reset: a new episode holding the user's identity
        facts from the closed one (`carry_over`) and the closed case (`previous`), and
        the key's state in it. `carried`: what `carried_over` gave for `state`, when the
        caller has read it already."""
        now = at
        facts, case = carried if carried is not None else await self.carried_over(state)
        reset = NewEpisode(
            state.session_id, f"auto:{decision.reason}", now, dict(decision.signals),
            tuple(facts), case,
        )  # fmt: skip
        await self.store.start_episode(reset)
        return await self.store.turn_state(state.key, window, now)

    async def carried_over(self, state: TurnState) -> tuple[Pairs, PreviousCase]:
        """What an automatic reset of `state`'s episode would carry over (identity facts,
        none with `carry="none"`) and keep of its case (reads only)."""
        exchanges = await self.store.signal_exchanges(state.episode.id, 0)
        identity = carried(exchanges, state.episode.carry_over) if self.carry == "identity" else ()
        case = previous_case(state.episode.id, exchanges, state.last_reply, self.language)
        earlier = state.episode.previous
        if earlier is not None and chains(state):
            case = chained(case, earlier)
        return identity, case

    async def revert(self, state: TurnState, *, window: int, at: datetime) -> TurnState | None:
        """Undo the automatic reset that opened `state`'s episode, as `/undo` does (the
        new episode's exchanges move back, the previous one reopens, marked reopened so
        no automatic reset follows at once); the key's state then, or None when the
        store found nothing to undo."""
        if await self.store.undo_reset(state.session_id, at, math.inf) is None:
            return None
        log.info("reset_reverted", episode=state.episode.id)
        return await self.store.turn_state(state.key, window, at)

    async def peek_reverted(
        self, state: TurnState, *, window: int, at: datetime
    ) -> TurnState | None:
        """What `revert` would make of `state`, read only (a dry run): the previous
        episode with its latest summary, and after its checkpoint its own exchanges then
        the new episode's."""
        case = state.episode.previous
        if case is None:
            return None
        episodes = {e.id: e for e in await self.store.episodes(state.key)}
        episode = episodes.get(case.episode_id)
        if episode is None:
            return None
        versions = await self.store.summaries(episode.id)
        summary = versions[-1] if versions else None
        own = await self.store.signal_exchanges(episode.id, summary.checkpoint if summary else 0)
        merged = (*own, *state.pending, *state.window)
        cut = max(len(merged) - window, 0) if window > 0 else len(merged)
        reopened = replace(episode, closed_at=None, close_reason=None, reopened_at=at)
        return replace(
            state, episode=reopened, summary=summary, window=merged[cut:], pending=merged[:cut]
        )

    async def undo(self, key: str) -> Episode | None:
        """Reopen the previous episode (see `EpisodeStore.undo_reset`); None when
        there is nothing to undo."""
        state = await self.store.turn_state(key, 1, self.clock())
        return await self.store.undo_reset(state.session_id, self.clock(), self.undo_within_s)

    async def forget(self, key: str) -> int:
        """Erase every row of `key`; how many session and inbox rows went."""
        await self.folds.forget(key)
        removed = await self.store.forget(key)
        log.info("forgotten")
        return removed
