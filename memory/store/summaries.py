"""The fold's port: what `FoldService` reads and writes (the state, the exchanges to
fold, the new summary version)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import Exchange, SummaryVersion, TurnState


@dataclass(frozen=True, slots=True)
class NewSummary:
    """A fold result; written only if `base_version` is still the episode's latest."""

    episode_id: int
    base_version: int  # 0 when there was no summary
    text: str
    checkpoint: int
    prompt_version: str
    model: str
    source_from: int
    source_to: int
    input_tokens: int
    output_tokens: int
    created_at: datetime
    dropped_facts: tuple[str, ...] = ()


class SummaryStore(Protocol):
    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """As `TurnStore.peek_state`: None for an unknown key."""
        ...

    async def peek_for_fold(
        self, key: str, window: int, opening: int
    ) -> tuple[TurnState, list[Exchange]] | None:
        """`peek_state` and the first `opening` signal exchanges of the current episode
        (empty when nothing is pending: there is nothing to fold)."""
        ...

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        """Signal exchanges with `after < id < upto`, oldest first, at most `limit`."""
        ...

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        """Version base+1 with its checkpoint, atomically; None (nothing written) when
        stale: another fold won, the episode is closed or gone, the checkpoint moves back."""
        ...
