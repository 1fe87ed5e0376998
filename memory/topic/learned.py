"""The offline topic decision: the learned model's probability against a profile's threshold.

A reset needs the model's probability of a new subject at or above the profile's
threshold (`support`: the precision-first one, `chat`: the best F1 on casual dialogue,
both chosen by cross-validation in `bench/topic_model/train.py`); below it the message continues.
The reason names the feature that pushed hardest towards the reset, so reports stay
readable. Empty episodes and idle silence are decided before the model, as in every mode.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter
from typing import Literal

from memory.topic.context import TopicContext, base_signals, precheck
from memory.topic.features import FEATURES, Extracted, extract
from memory.topic.heuristic import reading_signals
from memory.topic.model import Head, load_model, sigmoid
from memory.topic.opening import OpeningModel
from memory.topic.text import term_set
from memory.types import TopicDecision

Profile = Literal["support", "chat"]
_NEW_REQUEST = FEATURES.index("new_request")
_OTHER_FAMILY = FEATURES.index("other_family")
_ROUNDS_HIGH = FEATURES.index("summary_rounds_high")

# The stems a greeting's time of day leaves ("buenos días", "good evening"): no content.
_TIME_OF_DAY = frozenset({"buen", "dia", "tard", "noch", "morn", "aftern", "even"})

# Seed 002: many summary-of-summary rounds risk drift, so next to an explicit new-subject
# cue the bar drops by this much log-odds. Not fitted (no training turn has a summary).
LONG_THREAD_LOGIT = 0.5

_REASONS = {
    "closure_last_user": "case_closed",
    "closure_last_reply": "case_closed",
    "closes_then_moves_on": "case_closed",
    "family_shift": "intent_changed",
    "other_family": "intent_changed",
    "new_problem": "intent_changed",
    "returned": "returned_new_subject",
    "overnight": "returned_new_subject",
    "log_gap_hours": "returned_new_subject",
    "closed_novel": "case_closed",
    "gap_novel": "returned_new_subject",
}


def detect_learned(
    ctx: TopicContext,
    profile: Profile = "support",
    model: Head | None = None,
    opening: OpeningModel | None = None,
) -> TopicDecision:
    """Continue or reset from the learned model's probability of a new subject."""
    early = precheck(ctx)
    if early is None and profile == "support" and greeted_only(ctx):
        early = TopicDecision("continue", "empty_episode", {"empty_episode": True})
    if early is not None:
        return TopicDecision(early.action, early.reason, base_signals(ctx) | early.signals)
    model = model or load_model(profile)
    row = extract(ctx, opening)
    contributions = model.contributions(row.values)
    p = sigmoid(model.bias + sum(contributions.values()))
    threshold = _threshold(model, row)
    signals = (
        base_signals(ctx)
        | reading_signals(row.reading)
        | row.case.signals()
        | {
            "p": round(p, 4),
            "threshold": round(threshold, 4),
            "model": model.version,
            "profile": profile,
            "top_features": _top(contributions),
        }
    )
    if p >= threshold:
        return TopicDecision("reset", reason_of(contributions, model, row.values), signals)
    return TopicDecision("continue", "same_case", signals)


def greeted_only(ctx: TopicContext) -> bool:
    """A support episode whose user has said no word of content yet ("Buenas", "hi
    there!", "buenos días"): the problem that follows opens the case, it does not change
    it. Not in chit-chat (`chat`), where a greeting's reply often opens the first topic."""
    window = ctx.window
    if len(window) != 1 or ctx.summary.strip():
        return False
    return term_set(window[0].user_text) <= _TIME_OF_DAY


def reason_of(contributions: dict[str, float], model: Head, values: Sequence[float]) -> str:
    """The reason of the named feature pushing hardest towards a reset (a closed case, a
    change of intent, a return after a silence) by being there: above its training mean,
    with a weight towards a reset. A feature that pushes only by its absence (no change
    of intent where a change usually lowers the odds) names nothing, so the reason never
    contradicts the reading beside it. `new_subject` when no named one pushed (the
    message's words and shape did)."""
    means = dict(zip(model.features, model.means, strict=True))
    present = {n: x > means[n] for n, x in zip(model.features, values, strict=True)}
    named = [(v, n) for n, v in contributions.items() if n in _REASONS and v > 0 and present[n]]
    return _REASONS[max(named)[1]] if named else "new_subject"


def _threshold(model: Head, row: Extracted) -> float:
    threshold = model.threshold
    values = row.values
    explicit = values[_NEW_REQUEST] or values[_OTHER_FAMILY]
    if values[_ROUNDS_HIGH] and explicit and 0 < threshold < 1:
        logit = math.log(threshold / (1 - threshold))
        return sigmoid(logit - LONG_THREAD_LOGIT)
    return threshold


def _top(contributions: dict[str, float], n: int = 3) -> list[list[object]]:
    """The features that pushed hardest towards a reset, strongest first."""
    # `heapq.nlargest`'s documented equivalent, without its Python-level heap: 53 items
    ranked = sorted(contributions.items(), key=itemgetter(1), reverse=True)[:n]
    return [[name, round(value, 3)] for name, value in ranked if value > 0]
