"""The episode lifecycle's port: what `memory.episodes.Episodes` uses for reset, undo
and forget."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import Episode, Exchange, TurnState


@dataclass(frozen=True, slots=True)
class NewEpisode:
    """A reset of a session: close its current episode (its summaries stay as its
    record) and open one that holds `carry_over`, (kind, value) identity facts."""

    session_id: int
    opened_by: str  # "manual", or "auto:<reason>"
    at: datetime
    signals: dict[str, object] | None = None
    carry_over: tuple[tuple[str, str], ...] = ()


class EpisodeStore(Protocol):
    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """As `TurnStore.turn_state`: the key's session is created when new."""
        ...

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        """As `SummaryStore.signal_exchanges`."""
        ...

    async def start_episode(self, new: NewEpisode) -> Episode:
        """The reset `new` in one transaction; the episode opened (its carry-over is kept
        across restarts)."""
        ...

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        """Reopen the previous episode if the current one has folded nothing yet, or an
        automatic reset opened it less than `within_s` ago; its exchanges move back."""
        ...

    async def forget(self, key: str) -> int:
        """Delete every row of `key`; how many session and inbox rows went. Copies a
        backend still keeps (SQLite's WAL while a reader holds an old snapshot) are
        wiped as soon as they can be, in the background: see `erased`."""
        ...

    async def erased(self, wait_s: float = 0.0) -> bool:
        """True once every forgotten row is gone for real (no byte left anywhere the
        backend stores data), waiting up to `wait_s` seconds for that; never blocks writes."""
        ...
