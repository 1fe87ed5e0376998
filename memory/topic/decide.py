"""Topic detection: continue the episode or reset it (seed 002's four signals, plus idle).

`decide` is the one entry point the handler calls, before the request is assembled:
- `off`: always continue;
- `heuristic`: offline, the learned model (`learned.py`) over the features of the message,
  window and summary, at the profile's threshold; the hand-written rules it replaced stay
  as `detect_rules`, the benches' baseline arm;
- `llm`: the summary model's JSON verdict (malformed output or a provider error continues);
  without a model it falls back to the heuristic and says so in the signals.
Empty episodes never reset; idle silence resets in every mode but `off`, before any call.
"""

from __future__ import annotations

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
from memory.types import TopicDecision
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
