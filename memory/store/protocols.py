"""The conversation store port: a handful of primitives every backend implements."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import Episode, Exchange, InboxEntry, SummaryVersion, TopicDecision, TurnState


@dataclass(frozen=True, slots=True)
class NewExchange:
    """An exchange about to be stored, with the inbox entry it answers."""

    session_id: int
    episode_id: int
    user_text: str
    reply_text: str
    signal: bool
    noise_reason: str | None
    created_at: datetime
    stop_reason: str = "end"
    prompt_tokens: int = 0
    reply_tokens: int = 0
    external_id: str | None = None
    topic: TopicDecision | None = None
    inbox_id: int | None = None
    replies: tuple[str, ...] = ()


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


@dataclass(frozen=True, slots=True)
class Intake:
    """What `intake` did: `entry` is the new inbox entry, None for a redelivery or when
    `debug` (the key is in debug mode and nothing was stored)."""

    entry: InboxEntry | None
    debug: bool = False
    state: TurnState | None = None  # read with the entry when asked (`window`)


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


class ConversationStore(Protocol):
    # intake
    async def inbox_add(
        self, key: str, external_id: str, user: str, kind: str, text: str, at: datetime
    ) -> InboxEntry | None: ...
    async def intake(
        self,
        key: str,
        external_id: str,
        user: str,
        kind: str,
        text: str,
        at: datetime,
        *,
        unless_debug: bool = False,
        window: int | None = None,
    ) -> Intake: ...
    async def inbox_reject(
        self, key: str, external_id: str, reason: str, at: datetime
    ) -> bool: ...
    async def inbox_get(self, key: str, external_id: str) -> InboxEntry | None: ...
    async def inbox_unfinished(self) -> list[InboxEntry]: ...
    async def inbox_mark(
        self, entry_id: int, status: str, replies: Sequence[str] = (), *, at: datetime
    ) -> None: ...
    def inbox_done_soon(self, entry_id: int, at: datetime) -> asyncio.Future[None]: ...
    async def inbox_prune(self, before: datetime) -> int: ...
    # sessions and episodes
    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState: ...
    async def peek_state(self, key: str, window: int) -> TurnState | None: ...
    async def peek_for_fold(
        self, key: str, window: int, opening: int, *, due: int = 1
    ) -> tuple[TurnState, list[Exchange]] | None: ...
    async def set_debug(self, key: str, on: bool, at: datetime) -> None: ...
    async def start_episode(
        self, session_id: int, opened_by: str, signals: dict[str, object] | None, at: datetime
    ) -> Episode: ...
    async def undo_reset(
        self, session_id: int, at: datetime, within_s: float
    ) -> Episode | None: ...
    async def episodes(self, key: str) -> list[Episode]: ...
    # exchanges and summaries
    async def record_exchange(self, new: NewExchange) -> Exchange: ...
    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]: ...
    async def write_summary(self, new: NewSummary) -> SummaryVersion | None: ...
    async def summaries(self, episode_id: int) -> list[SummaryVersion]: ...
    # operators and erasure
    async def sessions(self) -> list[SessionInfo]: ...
    async def export(self, key: str) -> dict[str, object]: ...
    async def forget(self, key: str) -> int: ...
    async def ping(self) -> bool: ...
    async def close(self) -> None: ...
