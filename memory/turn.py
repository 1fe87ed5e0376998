"""The value types of one turn: the engine's configuration, the prepared request, its
read-only preview and the model call's outcome (`memory.engine` runs the turn)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memory.policy import Assembly, TooLarge
from memory.recall.rank import Hit
from memory.soft_reset.block import InPlay
from memory.types import Exchange, TopicDecision, TurnState
from providers.base import ChatReply, ProviderError

TurnObserver = Callable[["Prepared", "Outcome", Exchange], None]


NO_MESSAGE = TopicDecision("continue", "no_message")  # a preview without a message


async def no_topic_check(_state: TurnState, _message: str, _now: datetime) -> TopicDecision:
    return TopicDecision("continue", "off")


@dataclass(frozen=True, slots=True)
class EngineConfig:
    system_prompt: str
    window: int = 6
    fold_batch: int = 4
    context_tokens: int = 8000
    reply_tokens: int = 1024
    summary_tokens: int = 800
    language: str = "es"
    sync_fold_seconds: float = 20.0  # all synchronous folding of one turn, together
    undo_seconds: float = 3600.0  # /undo reopens an automatic reset this recent
    recall_tokens: int = 1000  # the recall block's share of the budget; 0 = recall off
    reset_carry: str = "identity"  # what an automatic reset carries over: identity or none


@dataclass(frozen=True, slots=True)
class Prepared:
    """Everything decided before the model is called; in a dry run nothing was written."""

    key: str
    message: str
    state: TurnState
    decision: TopicDecision
    plan: Assembly | TooLarge
    sync_folds: int = 0
    dry_run: bool = False
    would_fold: int = 0  # dry run only: exchanges a real turn would fold first
    recall: tuple[Hit, ...] = ()  # every hit found, best first (the plan shows what fits)
    soft: InPlay | None = None  # why the previous case rides along (None: it does not)

    @classmethod
    def dry(cls, seen: Preview) -> Prepared:
        """A dry run: the preview of the message, nothing folded."""
        plan, would = seen.plan, seen.would_fold
        return cls(
            seen.key, seen.message, seen.state, seen.decision, plan, 0, True, would,
            seen.recall, seen.soft,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Preview:
    """What the next request for a key would be, read-only: the topic decision, recall, the
    plan and its token counts, all as a real turn would compute them at this moment.

    `state` is what the request is built from (after the reset a real turn would make);
    `plan` is the request, or the refusal a real turn would give; over budget, where a
    real turn would first fold `would_fold` exchanges, it is the request as it stands.
    `as_is` is always the request as it stands, budget or not (what `inspect` shows)."""

    key: str
    message: str
    state: TurnState
    decision: TopicDecision
    plan: Assembly | TooLarge
    as_is: Assembly
    would_fold: int = 0
    recall: tuple[Hit, ...] = ()  # every hit found, best first (the plan shows what fits)
    soft: InPlay | None = None  # why the previous case rides along (None: it does not)


@dataclass(frozen=True, slots=True)
class Outcome:
    reply: ChatReply | None
    error: ProviderError | None
    noise_reason: str | None
    assembly: Assembly
    latency_s: float
    retried: bool = False

    @property
    def signal(self) -> bool:
        return self.noise_reason is None
