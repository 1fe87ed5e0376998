"""Frozen value types the memory policy works on. No I/O, no library types."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

TopicAction = Literal["continue", "reset"]


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Who a conversation belongs to. `str()` is the stored form: `telegram:<chat>`,
    `telegram:<chat>:<member>` (a group member's own conversation), `whatsapp:<wa_id>`,
    `console:<name>`. Keys never mix across channels."""

    channel: str
    chat: str
    member: str | None = None

    @classmethod
    def parse(cls, key: str) -> SessionKey:
        """`telegram:-100:7` → SessionKey("telegram", "-100", "7"). A console name may
        hold colons; only Telegram keys have a member part."""
        channel, _, rest = key.partition(":")
        if channel == "telegram" and rest.count(":") == 1:
            chat, _, member = rest.partition(":")
            return cls(channel, chat, member)
        return cls(channel, rest)

    def __str__(self) -> str:
        tail = f":{self.member}" if self.member is not None else ""
        return f"{self.channel}:{self.chat}{tail}"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the assistant reply to it, as stored."""

    id: int
    episode_id: int
    user_text: str
    reply_text: str
    signal: bool = True
    noise_reason: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SummaryVersion:
    """One version of an episode's cumulative summary; `checkpoint` is the last folded id."""

    id: int
    episode_id: int
    version: int
    text: str
    checkpoint: int
    prompt_version: str
    model: str
    source_from: int
    source_to: int
    input_tokens: int = 0
    output_tokens: int = 0
    round: int = 1
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TopicDecision:
    action: TopicAction = "continue"
    reason: str = ""
    signals: dict[str, object] = field(default_factory=dict)

    @property
    def reset(self) -> bool:
        return self.action == "reset"


@dataclass(frozen=True, slots=True)
class PreviousCase:
    """What an automatic reset keeps of the episode it closed, so the reset stays soft
    (`memory.soft_reset`): the case's hard facts, its distinctive terms and the bot's
    last question in it. Stored with the new episode; `/undo` and a revert drop it."""

    episode_id: int  # the episode the reset closed
    facts: tuple[tuple[str, str], ...] = ()  # (kind, value): every kind the fact guard knows
    terms: tuple[str, ...] = ()  # recall terms (`memory.recall.terms`) the case is about
    question: str = ""  # the bot's last reply of it, when that reply ended asking
    # Each fact in the words the chat gave it ("- User said: “at 09:40 PST”"), aligned
    # with `facts`; "" where the chat gave no words that read it back.
    words: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Episode:
    id: int
    session_id: int
    started_at: datetime
    closed_at: datetime | None = None
    close_reason: str | None = None
    opened_by: str | None = None  # why this episode began: None (first), 'manual', 'auto:<reason>'
    reopened_at: datetime | None = None  # set by /undo: the user said it is the same case
    # Identity facts an automatic reset carried over, (kind, value) each (invariant 6).
    carry_over: tuple[tuple[str, str], ...] = ()
    # The case an automatic reset closed to open this episode (None: first, manual, undone).
    previous: PreviousCase | None = None


@dataclass(frozen=True, slots=True)
class TurnState:
    """What one turn needs, read through indexes only (never a whole conversation)."""

    session_id: int
    key: str
    debug: bool
    episode: Episode
    summary: SummaryVersion | None
    window: tuple[Exchange, ...]  # last N signal exchanges, oldest first
    pending: tuple[Exchange, ...]  # signal exchanges after the checkpoint, older than the window
    last_activity: datetime | None
    last_reply: str | None  # the latest stored reply of the episode, signal or not
    debug_users: frozenset[str] = frozenset()  # the operators whose own messages are dry runs

    def debug_for(self, user: str) -> bool:
        """Debug is per operator: only the messages of whoever switched it on are dry runs."""
        return user in self.debug_users


@dataclass(frozen=True, slots=True)
class Arrival:
    """A message as it arrives, before the inbox holds it: what the intake stores, and
    the whole job of a dry run (debug mode stores nothing)."""

    key: str
    external_id: str
    user: str
    kind: str
    text: str
    received_at: datetime

    @property
    def session(self) -> SessionKey:
        return SessionKey.parse(self.key)

    def stored(self, entry_id: int) -> InboxEntry:
        """The inbox entry this arrival became, under its row id."""
        return InboxEntry(
            entry_id, self.key, self.external_id, self.user, self.kind, self.text,
            self.received_at,
        )  # fmt: skip


# "rejected": malformed input, acknowledged and kept (with its reason) only for dedupe
InboxStatus = Literal["pending", "answered", "done", "rejected"]


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """A raw inbound message, durable before it is acknowledged to the channel."""

    id: int
    key: str
    external_id: str
    user: str
    kind: str
    text: str
    received_at: datetime
    status: InboxStatus = "pending"
    replies: tuple[str, ...] = ()

    @property
    def session(self) -> SessionKey:
        """The entry's key as read back from the inbox row (its one parse)."""
        return SessionKey.parse(self.key)
