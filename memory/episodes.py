"""The episode lifecycle of a key: reset (manual or automatic), undo, forget.

Commands and the turn engine go through here rather than through the store's primitives:
a reset closes the current episode and opens a new one; undo reopens the previous one;
forget stops the key's running fold before its rows are erased, so a fold finishing late
cannot write anything back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Protocol

import structlog

from memory.carry_over import Pairs, carried
from memory.store.episodes import EpisodeStore, NewEpisode
from memory.types import Episode, TurnState

log = structlog.get_logger(__name__)


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
    ) -> None:
        self.store = store
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
        reason: str,
        signals: Mapping[str, object],
        *,
        window: int,
        at: datetime,
    ) -> TurnState:
        """The topic check decided a reset: a new episode holding the user's identity
        facts from the closed one (`carry_over`), and the key's state in it."""
        now = at
        facts = await self.carry_for(state)
        reset = NewEpisode(state.session_id, f"auto:{reason}", now, dict(signals), tuple(facts))
        await self.store.start_episode(reset)
        return await self.store.turn_state(state.key, window, now)

    async def carry_for(self, state: TurnState) -> Pairs:
        """What an automatic reset of `state`'s episode would carry over (reads only)."""
        if self.carry != "identity":
            return ()
        exchanges = await self.store.signal_exchanges(state.episode.id, 0)
        return carried(exchanges, state.episode.carry_over)

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
