"""Topic detection: continue the episode or reset it (seed 002's four signals, plus idle).

`decide` is the one entry point the handler calls, before the request is assembled:
- `off`: always continue;
- `heuristic`: offline, the learned model (`learned.py`) over the features of the message,
  window and summary, at the profile's threshold; the hand-written rules it replaced stay
  as `detect_rules`, the benches' baseline arm;
- `llm`: the summary model's JSON verdict (malformed output or a provider error continues);
  without a model it falls back to the heuristic and says so in the signals.
Empty episodes never reset; idle silence resets in every mode but `off`, before any call.

`make_topic_check` turns plain settings (no `config/` here) and the summary model into the
callable the engine runs before it builds a request; `/undo` is respected on the way out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memory.topic.context import TopicContext, base_signals
from memory.topic.heuristic import (
    DEFAULT_TUNING,
    PROFILES,
    SUPPORT_TUNING,
    Tuning,
    detect_rules,
)
from memory.topic.learned import Profile, detect_learned
from memory.topic.llm import PROMPT_VERSION, detect_llm, load_prompt, parse_llm_verdict
from memory.types import TopicDecision, TurnState
from providers.base import ChatModel

TopicMode = Literal["llm", "heuristic", "off"]

__all__ = [
    "DEFAULT_TUNING",
    "PROFILES",
    "PROMPT_VERSION",
    "SUPPORT_TUNING",
    "Profile",
    "TopicContext",
    "TopicMode",
    "Tuning",
    "decide",
    "detect_heuristic",
    "detect_learned",
    "detect_llm",
    "detect_rules",
    "load_prompt",
    "parse_llm_verdict",
    "respect_undo",
]


async def decide(
    mode: TopicMode,
    ctx: TopicContext,
    model: ChatModel | None,
    profile: Profile = "support",
) -> TopicDecision:
    """The topic decision for one incoming message, with `signals['mode']` recorded."""
    if mode == "off":
        return TopicDecision("continue", "off", base_signals(ctx) | {"mode": "off"})
    if mode == "llm" and model is not None:
        decision = await detect_llm(model, ctx)
        return _with(decision, {"mode": "llm"})
    extra: dict[str, object] = {"mode": "heuristic"}
    if mode == "llm":
        extra["llm_unavailable"] = True
    return _with(detect_heuristic(ctx, profile), extra)


def detect_heuristic(ctx: TopicContext, profile: Profile = "support") -> TopicDecision:
    """The offline decision (`VENTANA_TOPIC_DETECTION=heuristic`): the learned model."""
    return detect_learned(ctx, profile)


def respect_undo(
    decision: TopicDecision, reopened_at: datetime | None, now: datetime, within_s: float
) -> TopicDecision:
    """After /undo the user has said it is the same case: no automatic reset for a while
    (idle resets included), or the next message would undo their undo."""
    if not decision.reset or reopened_at is None:
        return decision
    if (now - reopened_at).total_seconds() > within_s:
        return decision
    signals = decision.signals | {"suppressed_reset": decision.reason}
    return TopicDecision("continue", "after_undo", signals)


def _with(decision: TopicDecision, extra: dict[str, object]) -> TopicDecision:
    return TopicDecision(decision.action, decision.reason, decision.signals | extra)


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
