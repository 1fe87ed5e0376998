"""What a topic check looks at, and the checks every mode shares (empty episode, idle)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.types import Exchange, TopicDecision


@dataclass(frozen=True, slots=True)
class TopicContext:
    """The new message and what the current episode holds; time is passed in, never read."""

    message: str
    window: tuple[Exchange, ...]
    summary: str
    now: datetime
    last_activity: datetime | None
    idle_reset_hours: float
    summary_rounds: int
    language: str


LONG_THREAD_ROUNDS = 2
"""Seed 002: two or more rounds of summary-of-summary on one thread risk drift."""


def idle_hours(ctx: TopicContext) -> float | None:
    """Hours of silence before this message, or None when there was no earlier message."""
    if ctx.last_activity is None:
        return None
    return (ctx.now - ctx.last_activity).total_seconds() / 3600


def precheck(ctx: TopicContext) -> TopicDecision | None:
    """A decision every mode takes before looking at content: nothing to reset, or idle."""
    if not ctx.window and not ctx.summary.strip():
        return TopicDecision("continue", "empty_episode", {"empty_episode": True})
    hours = idle_hours(ctx)
    if hours is not None and ctx.idle_reset_hours > 0 and hours > ctx.idle_reset_hours:
        signals: dict[str, object] = {
            "idle_hours": round(hours, 2),
            "idle_reset_hours": ctx.idle_reset_hours,
        }
        return TopicDecision("reset", "idle", signals)
    return None


def base_signals(ctx: TopicContext) -> dict[str, object]:
    """Signals reported whatever the mode decides."""
    hours = idle_hours(ctx)
    return {
        "idle_hours": None if hours is None else round(hours, 2),
        "summary_rounds": ctx.summary_rounds,
        "summary_rounds_high": ctx.summary_rounds >= LONG_THREAD_ROUNDS,
        "window_exchanges": len(ctx.window),
    }
