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

from memory.store.conversation import ConversationStore
from memory.types import Episode, TurnState

log = structlog.get_logger(__name__)


class FoldCanceller(Protocol):
    async def forget(self, key: str) -> None: ...


class Episodes:
    def __init__(
        self,
        store: ConversationStore,
        folds: FoldCanceller,
        *,
        undo_within_s: float = 3600.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.folds = folds
        self.undo_within_s = undo_within_s
        self.clock = clock

    async def reset(self, key: str) -> Episode:
        """The user asked for a clean slate (`/reset`): nothing carries over."""
        state = await self.store.turn_state(key, 1, self.clock())
        return await self.store.start_episode(state.session_id, "manual", None, self.clock())

    async def reset_automatically(
        self,
        state: TurnState,
        reason: str,
        signals: Mapping[str, object],
        *,
        window: int,
        at: datetime,
    ) -> TurnState:
        """The topic check decided a reset: a new episode, and the key's state in it."""
        now = at
        await self.store.start_episode(state.session_id, f"auto:{reason}", dict(signals), now)
        return await self.store.turn_state(state.key, window, now)

    async def undo(self, key: str) -> Episode | None:
        """Reopen the previous episode (see `ConversationStore.undo_reset`); None when
        there is nothing to undo."""
        state = await self.store.turn_state(key, 1, self.clock())
        return await self.store.undo_reset(state.session_id, self.clock(), self.undo_within_s)

    async def forget(self, key: str) -> int:
        """Erase every row of `key`; how many session and inbox rows went."""
        await self.folds.forget(key)
        removed = await self.store.forget(key)
        log.info("forgotten")
        return removed
