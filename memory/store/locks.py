"""The chat lock's port: one chat's turns take turns, across every process on a store
(`ConversationHandler` holds it while a turn runs). Kept apart from what is stored, as
aiogram keeps `BaseEventIsolation.lock` apart from `BaseStorage`."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from memory.types import InboxEntry


@dataclass(frozen=True, slots=True)
class Claim:
    """What `claim_turn` hands its holder: the chat's entries to run now, oldest first,
    and whether turn states read before the claim still hold (`exclusive`: no other
    process writes this chat, so a state read with the intake is current)."""

    entries: tuple[InboxEntry, ...]
    exclusive: bool


class ChatLocks(Protocol):
    def claim_turn(self, entry: InboxEntry) -> AbstractAsyncContextManager[Claim]:
        """Hold `entry`'s chat while its turn runs, against every other process on this
        store, and yield what to run: the chat's pending entries up to `entry` in arrival
        order (an earlier one a dead worker left behind comes first; one another worker
        ran is not among them). A one-process store yields `entry` alone: its chat queue
        already orders the chat."""
        ...
