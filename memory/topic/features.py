"""The topic model's input: one fixed-order vector of what the detectors already read.

Pure: no I/O, no clock. Every value comes from the readings the rules use (terms and
stems, cue phrases, intent families, the fact extractor, the support case reading), so a
turn costs little more than the rules did; the texts' readings are cached per text.

`FEATURES` names the columns; the model file lists the same names in the same order and
`memory.topic.model` refuses a file that does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memory.recall import dense
from memory.topic.context import LONG_THREAD_ROUNDS, TopicContext, idle_hours
from memory.topic.cues import CLOSURE, CONTRAST
from memory.topic.heuristic import DEFAULT_TUNING, Reading, asked_terms, read_message
from memory.topic.opening import OpeningModel, opening_logit
from memory.topic.support import CaseReading, fact_values, read_case
from memory.topic.text import phrase_hits, sentences, term_set, words

# The other speaker addressed ("what about you?", "¿y tú?"): chit-chat opens topics so.
_YOU = frozenset(("you", "your", "yours", "tu", "tus", "usted", "ustedes", "vos", "ti"))

# Nearness in meaning: the cosines of a sentence embedding (`meaning`).
MEANING = ("meaning_known", "meaning_last_user", "meaning_last_reply", "meaning_window")

FEATURES: tuple[str, ...] = (
    # how much the message says
    "log_terms",
    "log_chars",
    "question",
    "ends_with_question",
    "opening_question",
    "question_novelty",
    "asks_the_other",
    "ack_then_more",
    "last_reply_log_terms",
    # lexical overlap with the episode, several normalisations
    "novelty",
    "novel_terms",
    "last_overlap",
    "last_overlap_share",
    "last_jaccard",
    "last_user_share",
    "last_reply_share",
    "window_share",
    "summary_share",
    "episode_shared_terms",
    # facts (order numbers, amounts, emails…) of the message the episode already holds
    "message_facts",
    "shared_facts",
    # cue classes, in the message and in the last exchange
    "new_request",
    "continuation",
    "back_reference",
    "closure_in_message",
    "contrast_in_message",
    "closes_then_moves_on",
    "closure_last_user",
    "closure_last_reply",
    "last_reply_question",
    "answers_question",
    # the support case reading
    "side_question",
    "strong_change",
    "new_problem",
    # intent families
    "message_family",
    "episode_family",
    "same_family",
    "other_family",
    "family_shift",
    "neutral_in_case",
    # time and size of the episode
    "log_gap_hours",
    "overnight",
    "returned",
    "log_window",
    "summary_rounds_high",
    # nearness in meaning (a sentence embedding), not only shared words
    *MEANING,
    # the message's own shape: how much it reads like a case's first message
    "opening",
    # products the sum cannot form: something new after a closed case, after a silence,
    # in the shape of an opening
    "closed_novel",
    "gap_novel",
    "opening_novel",
)
_AT = {name: n for n, name in enumerate(FEATURES)}


@dataclass(frozen=True, slots=True)
class Extracted:
    """The vector and the readings it came from (the decision reports both)."""

    values: tuple[float, ...]
    reading: Reading
    case: CaseReading

    def named(self) -> dict[str, float]:
        return dict(zip(FEATURES, self.values, strict=True))


def extract(ctx: TopicContext, opening: OpeningModel | None = None) -> Extracted:
    """The feature vector of the message against the current episode (`opening`: another
    opening model than the shipped one, for the trainer)."""
    reading = read_message(ctx, DEFAULT_TUNING)
    case = read_case(ctx)
    values = (
        *_size(ctx, reading),
        *_overlap(ctx, reading, case),
        *_facts(ctx, case),
        *_cues(ctx, reading, case),
        *_families(reading),
        *_time(ctx, case),
        *meaning(ctx),
        opening.logit(ctx.message) if opening is not None else opening_logit(ctx.message),
    )
    return Extracted((*values, *_products(values)), reading, case)


def _products(v: tuple[float, ...]) -> tuple[float, float, float]:
    novelty = v[_AT["novelty"]]
    closed = max(v[_AT["closure_last_user"]], v[_AT["closure_last_reply"]])
    return (closed * novelty, v[_AT["log_gap_hours"]] * novelty, v[_AT["opening"]] * novelty)


def _size(ctx: TopicContext, r: Reading) -> tuple[float, ...]:
    parts = sentences(ctx.message)
    asked = asked_terms(ctx.message)
    last = ctx.window[-1] if ctx.window else None
    return (
        math.log1p(len(r.terms)),
        math.log1p(len(ctx.message)),
        float("?" in ctx.message),
        float(bool(parts) and "?" in parts[-1]),
        float(r.opening_question),
        _share(len(asked & r.novel), len(asked)),
        float(any("?" in p and _YOU.intersection(words(p)) for p in parts)),
        float(len(parts) > 1 and len(words(parts[0])) <= 3),
        math.log1p(len(term_set(last.reply_text))) if last else 0.0,
    )


def _overlap(ctx: TopicContext, r: Reading, case: CaseReading) -> tuple[float, ...]:
    n = len(r.terms)
    last = ctx.window[-1] if ctx.window else None
    user = term_set(last.user_text) if last else frozenset()
    reply = term_set(last.reply_text) if last else frozenset()
    recent = user | reply
    union = len(r.terms | recent)
    texts = [term_set(t) for e in ctx.window for t in (e.user_text, e.reply_text)]
    in_window = n - len(r.terms.difference(*texts))  # the terms some window text has
    in_summary = len(r.terms & term_set(ctx.summary)) if ctx.summary else 0
    return (
        r.novelty,
        min(len(r.novel), 5) / 5,
        min(r.recent_overlap, 3) / 3,
        _share(r.recent_overlap, n),
        _share(len(r.terms & recent), union),
        _share(len(r.terms & user), n),
        _share(len(r.terms & reply), n),
        _share(in_window, n),
        _share(in_summary, n),
        min(case.shared_terms, 5) / 5,
    )


def _facts(ctx: TopicContext, case: CaseReading) -> tuple[float, ...]:
    return (min(len(fact_values(ctx.message)), 2) / 2, min(case.shared_facts, 2) / 2)


def _cues(ctx: TopicContext, r: Reading, case: CaseReading) -> tuple[float, ...]:
    last = ctx.window[-1] if ctx.window else None
    closed = bool(r.closure_last) and last is not None
    user_closure = closed and bool(last and phrase_hits(last.user_text, CLOSURE))
    reply_closure = bool(last and phrase_hits(last.reply_text, CLOSURE))
    return (
        float(bool(r.new_request)),
        float(bool(r.continuation)),
        float(bool(r.back_references)),
        float(bool(r.closure_in_message)),
        float(bool(phrase_hits(ctx.message, CONTRAST))),
        float(case.closed_in_message),
        float(user_closure),
        float(reply_closure and closed),
        float(bool(last and "?" in last.reply_text)),
        float(r.answers_question),
        float(bool(case.side_question)),
        float(bool(case.strong_change)),
        float(bool(case.new_problem)),
    )


def _families(r: Reading) -> tuple[float, ...]:
    same = r.message_family is not None and r.message_family == r.episode_family
    other = r.message_family is not None and r.message_family != r.episode_family
    return (
        float(r.message_family is not None),
        float(r.episode_family is not None),
        float(same),
        float(other),
        float(r.family_shift),
        float(r.message_family is None and r.episode_family is not None),
    )


def _time(ctx: TopicContext, case: CaseReading) -> tuple[float, ...]:
    hours = idle_hours(ctx) or 0.0
    before = ctx.last_activity
    overnight = before is not None and hours >= 4 and before.date() != ctx.now.date()
    return (
        math.log1p(max(hours, 0.0)),
        float(overnight),
        float(case.returned),
        math.log1p(len(ctx.window)),
        float(ctx.summary_rounds >= LONG_THREAD_ROUNDS),
    )


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def meaning(ctx: TopicContext) -> tuple[float, float, float, float]:
    """(known, cos last user, cos last reply, cos window) of the message: how near it sits
    in meaning to the episode, where shared words see nothing ("my card was charged
    twice", "the refund for the double payment"). The static embedding recall uses
    (`memory.recall.dense`: WordLlama `l2_supercat`, inside an installed package, nothing
    downloaded) gives each text a unit vector, cached by text there: the message is
    embedded once for the topic check and recall, and a window's texts recur turn after
    turn. Without the package, a text without a content word or a first message, every
    value is 0 and `known` too, so the model tells "unrelated" from "not measured"."""
    message = dense.embed(ctx.message)
    if message is None or not ctx.window:
        return (0.0, 0.0, 0.0, 0.0)
    last = ctx.window[-1]
    texts = [
        v
        for e in ctx.window
        for t in (e.user_text, e.reply_text)
        if (v := dense.embed(t)) is not None
    ]
    window = 0.0
    if texts:
        total = sum(texts[1:], texts[0])
        norm = float((total @ total) ** 0.5)
        window = float(message @ total) / norm if norm else 0.0
    return (
        1.0,
        _cosine(message, dense.embed(last.user_text)),
        _cosine(message, dense.embed(last.reply_text)),
        window,
    )


def _cosine(a: Any, b: Any) -> float:
    return 0.0 if b is None else float(a @ b)
