"""What operators read (`ventana sessions`, `export`, `inspect`, `doctor`, replay
reports): listings and every stored row of a key, never on a turn's path."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import Episode, Exchange, SummaryVersion, TurnState


@dataclass(frozen=True, slots=True)
class SessionInfo:
    key: str
    created_at: datetime
    last_activity: datetime | None
    exchanges: int
    noise: int
    episodes: int
    summary_versions: int
    debug: bool


class OperatorQueries(Protocol):
    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """As `TurnStore.peek_state`: reads only, None for an unknown key."""
        ...

    async def summaries(self, episode_id: int) -> list[SummaryVersion]: ...
    async def episodes(self, key: str) -> list[Episode]: ...
    async def all_exchanges(self, key: str) -> list[Exchange]: ...
    async def sessions(self) -> list[SessionInfo]: ...
    async def export(self, key: str) -> dict[str, object]: ...
    async def ping(self) -> bool: ...
    async def describe(self) -> str:
        """One line on the backend for doctor: which, where, its schema and settings
        (`sqlite data/ventana.db (8 migrations, WAL, synchronous=normal)`); no secret."""
        ...
