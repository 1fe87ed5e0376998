"""The hand-written topic rules: the baseline arm next to the learned model (`learned.py`).

Seed 002's signals read from words, Spanish and English; `read_message` is also the
features' source (`features.py`).

Precision first. A reset needs positive evidence of a new subject (the previous case
closed, the intent family changed, or enough new-subject points), while evidence of the
same case (shared words, answering the assistant's question, "still failing", the same
intent family) takes points away. Many summary rounds only lower the bar, never reset alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from memory.topic.context import TopicContext, base_signals, precheck
from memory.topic.cues import (
    BACK_REFERENCES,
    CLOSURE,
    CONTINUATION,
    CONTRAST,
    INTENT_FAMILIES,
    NEW_REQUEST,
)
from memory.topic.families import family_hits, family_hits_in
from memory.topic.support import case_rules, closes_then_moves_on, read_case
from memory.topic.text import (
    new_request_hits,
    phrase_hits,
    phrase_hits_in,
    sentences,
    term_set,
    terms,
    words,
)
from memory.types import Exchange, TopicDecision


@dataclass(frozen=True, slots=True)
class Tuning:
    """Weights and thresholds of the new-subject score (tuned on TIAGE train, see bench)."""

    threshold: float = 0.7
    opening_question: float = 1.0
    novelty: float = 0.5
    new_request: float = 0.6
    answers_question: float = 0.5
    overlap: float = 1.0
    continuation: float = 0.6
    back_reference: float = 0.75
    same_family: float = 1.0
    neutral_in_case: float = 0.8
    novelty_cap: int = 3
    overlap_cap: int = 2
    long_thread_discount: float = 0.3
    closure_novelty: float = 0.5
    family_share: float = 0.6
    # A reset on word novelty alone (no closure, no intent change) needs an explicit
    # new-request cue ("otra cosa", "by the way"). Support follow-ups ("will I need to
    # return it?") are full of new words yet the same case; chit-chat is not.
    lexical_needs_cue: bool = False
    # The support case rules (`memory.topic.support`): side questions continue, a reset
    # needs a closed case, or nothing tying the message to the case after a change.
    case_rules: bool = False


DEFAULT_TUNING = Tuning()  # the "chat" profile, tuned on TIAGE (casual dialogue)
SUPPORT_TUNING = Tuning(
    lexical_needs_cue=True, case_rules=True
)  # the product default: precision first
PROFILES = {"support": SUPPORT_TUNING, "chat": DEFAULT_TUNING}


@dataclass(frozen=True, slots=True)
class Reading:
    """The message read against the episode; every field ends up in `signals`."""

    terms: frozenset[str]
    novel: frozenset[str]
    recent_overlap: int
    opening_question: bool
    answers_question: bool
    new_request: tuple[str, ...]
    continuation: tuple[str, ...]
    back_references: tuple[str, ...]
    closure_last: tuple[str, ...]
    closure_in_message: tuple[str, ...]
    message_family: str | None
    episode_family: str | None
    family_shift: bool

    @property
    def novelty(self) -> float:
        return len(self.novel) / len(self.terms) if self.terms else 0.0


def detect_rules(ctx: TopicContext, tuning: Tuning = DEFAULT_TUNING) -> TopicDecision:
    """Continue or reset from the words of the message, the window and the summary."""
    early = precheck(ctx)
    if early is not None:
        return TopicDecision(early.action, early.reason, base_signals(ctx) | early.signals)
    reading = read_message(ctx, tuning)
    score = _score(reading, tuning)
    threshold = _threshold(ctx, reading, tuning)
    signals = (
        base_signals(ctx)
        | reading_signals(reading)
        | {
            "score": round(score, 3),
            "threshold": round(threshold, 3),
        }
    )
    if reading.closure_last and _new_subject_begins(reading, tuning):
        return TopicDecision("reset", "case_closed", signals)
    if tuning.case_rules:
        case = read_case(ctx)
        signals |= case.signals()
        other_intent = reading.message_family not in (None, reading.episode_family)
        decided = case_rules(case, reading.family_shift or other_intent)
        if decided is not None:
            return TopicDecision(decided[0], decided[1], signals)
    if reading.family_shift:
        return TopicDecision("reset", "intent_changed", signals)
    cue_ok = bool(reading.new_request) or not tuning.lexical_needs_cue
    if reading.terms and score >= threshold and cue_ok:
        return TopicDecision("reset", "new_subject", signals)
    return TopicDecision("continue", "same_case", signals)


def read_message(ctx: TopicContext, tuning: Tuning) -> Reading:
    message_terms = term_set(ctx.message)
    last = ctx.window[-1] if ctx.window else None
    recent = _terms_of(last) if last else frozenset()
    message_family, episode_family, shift = _families(ctx, tuning)
    return Reading(
        terms=message_terms,
        novel=_novel(message_terms, ctx),
        recent_overlap=len(message_terms & recent),
        opening_question=_opens_question(ctx.message, recent),
        answers_question=bool(last and "?" in last.reply_text and "?" not in ctx.message),
        new_request=tuple(new_request_hits(ctx.message, NEW_REQUEST)),
        continuation=tuple(phrase_hits(ctx.message, CONTINUATION)),
        back_references=tuple(sorted(BACK_REFERENCES.intersection(words(ctx.message)))),
        closure_last=_closure(last, user_only=tuning.case_rules),
        closure_in_message=tuple(phrase_hits(ctx.message, CLOSURE)),
        message_family=message_family,
        episode_family=episode_family,
        family_shift=shift,
    )


def _novel(message_terms: frozenset[str], ctx: TopicContext) -> frozenset[str]:
    """Message terms found neither in the summary nor in the window.

    Subtracts each text's cached term set in turn (each step only walks the few message
    terms left) instead of building the union of ~1,000 context terms every turn."""
    novel = message_terms - term_set(ctx.summary)
    for exchange in ctx.window:
        if not novel:  # nothing left to take away
            break
        novel = novel - term_set(exchange.user_text) - term_set(exchange.reply_text)
    return novel


def _terms_of(exchange: Exchange) -> frozenset[str]:
    """The terms of the exchange's two texts: those of the texts joined by a newline,
    since no word spans the newline."""
    return term_set(exchange.user_text) | term_set(exchange.reply_text)


def _closure(last: Exchange | None, *, user_only: bool = False) -> tuple[str, ...]:
    """Closing phrases of the last exchange (of its user text alone with `user_only`: an
    agent's "we want it resolved" closes nothing), unless it also says 'but ...', or its user
    text closed a case and moved on to a new one ("ya está resuelto; otra consulta: …"):
    that closing phrase was about the case before."""
    if last is None or phrase_hits(last.user_text, CONTRAST):
        return ()
    if closes_then_moves_on(last.user_text):
        return ()
    if user_only:  # support: the customer closes the case ("queremos dejarlo resuelto")
        return tuple(phrase_hits(last.user_text, CLOSURE))
    return tuple(phrase_hits_in((last.user_text, last.reply_text), CLOSURE))


def _opens_question(message: str, recent: frozenset[str]) -> bool:
    """A question about something the last exchange did not mention."""
    return bool(asked_terms(message) - recent)


@lru_cache(maxsize=1024)
def asked_terms(message: str) -> frozenset[str]:
    """The terms of the message's questions. Cached per message text, like the other
    readings of the message (the same text may come again: a retry, another chat)."""
    return frozenset(t for s in sentences(message) if "?" in s for t in terms(s))


def _families(ctx: TopicContext, tuning: Tuning) -> tuple[str | None, str | None, bool]:
    """The message's and the episode's intent families, and whether the intent changed."""
    said = family_hits(ctx.message, INTENT_FAMILIES)
    episode = (ctx.summary, *(e.user_text for e in ctx.window))
    before = family_hits_in(episode, INTENT_FAMILIES)
    message_family = _dominant(said, share=0.4, minimum=1)
    episode_family = _dominant(before, share=tuning.family_share, minimum=2)
    if message_family is None or episode_family is None or message_family == episode_family:
        return message_family, episode_family, False
    strong = said[message_family]
    old_in_message = said.get(episode_family, 0)
    new_in_episode = before.get(message_family, 0) / sum(before.values())
    shift = strong >= 2 and old_in_message * 2 <= strong and new_in_episode < 0.25
    return message_family, episode_family, shift


def _dominant(counts: dict[str, int], *, share: float, minimum: int) -> str | None:
    if not counts:
        return None
    family, hits = max(counts.items(), key=lambda item: item[1])
    ties = [f for f, h in counts.items() if h == hits]
    if len(ties) > 1 or hits < minimum or hits / sum(counts.values()) <= share:
        return None
    return family


def _score(r: Reading, t: Tuning) -> float:
    """New-subject points minus same-case points."""
    points = t.opening_question * r.opening_question
    points += t.novelty * min(len(r.novel), t.novelty_cap) / t.novelty_cap
    points += t.new_request * bool(r.new_request)
    points -= t.answers_question * r.answers_question
    points -= t.overlap * min(r.recent_overlap, t.overlap_cap) / t.overlap_cap
    points -= t.continuation * bool(r.continuation)
    points -= t.back_reference * bool(r.back_references)
    same_family = r.message_family is not None and r.message_family == r.episode_family
    # Inside a recognisable case, a message with no intent words of its own is about the case.
    neutral_in_case = r.message_family is None and r.episode_family is not None
    return points - t.same_family * same_family - t.neutral_in_case * neutral_in_case


def _threshold(ctx: TopicContext, r: Reading, t: Tuning) -> float:
    """Many summary rounds lower the bar, but only next to an explicit new-subject signal."""
    if base_signals(ctx)["summary_rounds_high"] and _explicit_new_subject(r):
        return t.threshold - t.long_thread_discount
    return t.threshold


def _explicit_new_subject(r: Reading) -> bool:
    other_intent = r.message_family is not None and r.message_family != r.episode_family
    return bool(r.new_request) or other_intent


def _new_subject_begins(r: Reading, t: Tuning) -> bool:
    """After a closed case: a message with substance of its own, not a farewell."""
    if r.closure_in_message or r.continuation or not r.terms:
        return False
    novel_enough = len(r.novel) >= 2 and r.novelty >= t.closure_novelty
    other_intent = r.message_family is not None and r.message_family != r.episode_family
    return novel_enough or bool(r.new_request) or other_intent


def reading_signals(r: Reading) -> dict[str, object]:
    return {
        "message_terms": len(r.terms),
        "novel_terms": sorted(r.novel),
        "novelty": round(r.novelty, 3),
        "recent_overlap": r.recent_overlap,
        "opening_question": r.opening_question,
        "answers_question": r.answers_question,
        "new_request_cues": list(r.new_request),
        "continuation_cues": list(r.continuation),
        "back_references": list(r.back_references),
        "closure_cues_last_exchange": list(r.closure_last),
        "closure_cues_message": list(r.closure_in_message),
        "message_intent": r.message_family,
        "episode_intent": r.episode_family,
        "intent_changed": r.family_shift,
    }
