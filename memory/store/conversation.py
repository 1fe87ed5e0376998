"""The conversation memory port: sessions, episodes, exchanges and summaries of a key.

Methods say what the caller wants; how a backend saves round trips stays inside it. One
backend class may implement this and `DeliveryInbox` together, so that a turn's exchange
and its inbox entry commit in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory.types import (
    Episode,
    Exchange,
    InboxEntry,
    PreviousCase,
    SummaryVersion,
    TopicDecision,
    TurnState,
)
from providers.base import Usage


@dataclass(frozen=True, slots=True)
class NewEpisode:
    """A reset of a session: close its current episode (its summaries stay as its
    record) and open one that holds `carry_over`, (kind, value) identity facts, and
    `previous`, the closed case (an automatic reset's: `memory.soft_reset`)."""

    session_id: int
    opened_by: str  # "manual", or "auto:<reason>"
    at: datetime
    signals: dict[str, object] | None = None
    carry_over: tuple[tuple[str, str], ...] = ()
    previous: PreviousCase | None = None


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
    """What `begin_turn` did: `entry` is the new inbox entry, None for a redelivery or
    when `debug` (the sender has debug on for the key and nothing was stored)."""

    entry: InboxEntry | None
    debug: bool = False
    state: TurnState | None = None  # the key's state as of the intake, with a new entry


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
    # the turn
    async def begin_turn(self, draft: InboxEntry, window: int) -> Intake:
        """Make `draft` (a message not yet stored: id 0) durable in the inbox, unless its
        key is in debug mode (a dry run stores nothing); a new key gets its session and
        first episode. A new entry comes back with the key's turn state as of this commit
        (`window` exchanges)."""
        ...

    async def turn_state(self, key: str, window: int, at: datetime) -> TurnState:
        """The state of `key`, creating its session (and first episode) when new."""
        ...

    async def peek_state(self, key: str, window: int) -> TurnState | None:
        """Like `turn_state`, but reads only: None for an unknown key."""
        ...

    async def peek_for_fold(
        self, key: str, window: int, opening: int
    ) -> tuple[TurnState, list[Exchange]] | None:
        """`peek_state` and the first `opening` signal exchanges of the current episode
        (empty when nothing is pending: there is nothing to fold)."""
        ...

    async def record_exchange(self, new: NewExchange) -> Exchange:
        """Store the exchange and mark its inbox entry answered, in one transaction."""
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

    async def summaries(self, episode_id: int) -> list[SummaryVersion]: ...
    async def set_debug(self, key: str, on: bool, at: datetime, user: str) -> None:
        """Switch debug on or off for `user`'s own messages in `key` (a shared group is one
        key: the other members keep getting normal replies)."""
        ...

    # episodes (through `memory.episodes.Episodes`)
    async def start_episode(self, new: NewEpisode) -> Episode:
        """The reset `new` in one transaction; the episode opened (its carry-over and
        previous case are kept across restarts)."""
        ...

    async def undo_reset(self, session_id: int, at: datetime, within_s: float) -> Episode | None:
        """Reopen the previous episode if the current one has folded nothing yet, or an
        automatic reset opened it less than `within_s` ago; its exchanges move back."""
        ...

    async def episodes(self, key: str) -> list[Episode]: ...
    async def forget(self, key: str) -> int:
        """Delete every row of `key`; how many session and inbox rows went. Copies a
        backend still keeps (SQLite's WAL while a reader holds an old snapshot) are
        wiped as soon as they can be, in the background: see `erased`."""
        ...

    async def erased(self, wait_s: float = 0.0) -> bool:
        """True once every forgotten row is gone for real (no byte left anywhere the
        backend stores data), waiting up to `wait_s` seconds for that; never blocks writes."""
        ...

    # operators
    async def all_exchanges(self, key: str) -> list[Exchange]: ...
    async def sessions(self) -> list[SessionInfo]: ...
    async def export(self, key: str) -> dict[str, object]: ...
    async def ping(self) -> bool: ...
    async def close(self) -> None: ...
