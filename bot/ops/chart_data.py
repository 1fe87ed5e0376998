"""What every chart format shares: colours, limits, and the report's turns by session and
in buckets (`chart` draws HTML and SVG, `chart_png` PNG)."""

from __future__ import annotations

import math
from typing import Any

Turns = list[dict[str, Any]]
PROMPT, FULL, FOLD, RESET = "#1f6feb", "#b0b7c3", "#2da44e", "#cf222e"
MAX_POINTS = 400  # more points than this across one panel is ink, not information
FOLD_MARKS = 60  # fold-in markers per panel, at most


class ChartError(Exception):
    """The chart cannot be drawn in the requested format."""


def by_session(turns: Turns) -> dict[str, Turns]:
    sessions: dict[str, Turns] = {}
    for turn in turns:
        sessions.setdefault(str(turn["session"]), []).append(turn)
    return sessions


def buckets(turns: Turns, max_points: int = MAX_POINTS) -> list[dict[str, Any]]:
    """Consecutive turns grouped so at most `max_points` remain: each bucket's first and
    last turn, the mean, min and max prompt tokens, the mean full history, its fold-ins."""
    size = max(1, math.ceil(len(turns) / max_points))
    out = []
    for start in range(0, len(turns), size):
        chunk = turns[start : start + size]
        prompts = [t["prompt_tokens"] for t in chunk]
        out.append(
            {
                "turn": chunk[0]["turn"],
                "last": chunk[-1]["turn"],
                "prompt": sum(prompts) / len(prompts),
                "prompt_min": min(prompts),
                "prompt_max": max(prompts),
                "full": sum(t["full_history_tokens"] for t in chunk) / len(chunk),
                "folds": sum(t["fold_calls"] for t in chunk),
            }
        )
    return out
