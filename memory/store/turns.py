"""The turn's port: intake, the key's state, the stored exchange (what `MemoryEngine`
and the handler's intake use).

Methods say what the caller wants; how a backend saves round trips stays inside it. One
backend class implements this with `DeliveryInbox`, so that a turn's exchange and its
inbox entry commit in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import Exchange, InboxEntry, TopicDecision, TurnState
from providers.base import Usage


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
    model: str = ""  # `provider:model` that answered, as it reported itself
    usage: Usage | None = None  # as the provider reported it; None when it did not answer


@dataclass(frozen=True, slots=True)
class Intake:
    """What `begin_turn` did: `entry` is the new inbox entry, None for a redelivery or
    when `debug` (the sender has debug on for the key and nothing was stored)."""

    entry: InboxEntry | None
    debug: bool = False
    state: TurnState | None = None  # the key's state as of the intake, with a new entry


class TurnStore(Protocol):
    async def begin_turn(self, draft: InboxEntry, window: int) -> Intake:
        """Make `draft` (a message not yet stored: id 0) durable in the inbox, unless its
        key is in debug mode (a dry run stores nothing); a new key gets its session and
        first episode. A new entry comes back with the key's turn state as of this commit
        (`window` exchanges)."""
        ...

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state of `key`, creating its session (and first episode) when new. The
        state `begin_turn` read is the turn's own, without a second read, when nothing of
        the key was written since (the backend keeps it)."""
        ...

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """Like `turn_state`, but reads only: None for an unknown key."""
        ...

    async def record_exchange(self, new: NewExchange) -> Exchange:
        """Store the exchange and mark its inbox entry answered, in one transaction."""
        ...

    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        """Switch debug on or off for `user`'s own messages in `key` (a shared group is one
        key: the other members keep getting normal replies)."""
        ...
