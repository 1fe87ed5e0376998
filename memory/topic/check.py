"""The engine's topic check: the topic decision for a key's state and a new message.

`make_topic_check` turns plain settings (no `config/` here) and the summary model into the
callable the engine runs before it builds a request; `/undo` is respected on the way out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from memory.topic.decide import TopicContext, TopicMode, decide, respect_undo
from memory.topic.learned import Profile
from memory.types import TopicDecision, TurnState
from providers.base import ChatModel

TopicCheck = Callable[[TurnState, str, datetime], Awaitable[TopicDecision]]


@dataclass(frozen=True, slots=True)
class TopicSettings:
    """What the topic check reads of the settings."""

    mode: TopicMode = "heuristic"
    profile: Profile = "support"
    idle_reset_hours: float = 0.0
    undo_seconds: float = 3600.0  # no automatic reset this soon after an /undo
    language: str = "es"


def make_topic_check(settings: TopicSettings, model: ChatModel | None) -> TopicCheck:
    """The check for `settings`; `model` is the summary model (None: the heuristic stands
    in for `llm`)."""

    async def check(state: TurnState, message: str, now: datetime) -> TopicDecision:
        ctx = TopicContext(
            message=message,
            window=state.window,
            summary=state.summary.text if state.summary else "",
            now=now,
            last_activity=state.last_activity,
            idle_reset_hours=settings.idle_reset_hours,
            summary_rounds=state.summary.round if state.summary else 0,
            language=settings.language,
        )
        decision = await decide(settings.mode, ctx, model, settings.profile)
        return respect_undo(decision, state.episode.reopened_at, now, settings.undo_seconds)

    return check
