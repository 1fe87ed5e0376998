"""The topic check's per-turn fast paths (indexed cue lists, cached per-text readings,
set differences for overlaps) give what the plain code gave (issue 29).

Each reference is the code before the fast path, kept here; the property tests compare
both on generated texts, windows and cue lists, and check that what a cache hands out
cannot be changed by its caller."""

from __future__ import annotations

import heapq
import json
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.topic import features, learned, support, text
from memory.topic.context import TopicContext
from memory.topic.cues import CLOSURE, CONTINUATION, CONTRAST, NEW_REQUEST
from memory.topic.heuristic import DEFAULT_TUNING, read_message
from memory.topic.model import load_model
from memory.topic.support import NEW_PROBLEM, SIDE_QUESTION, STRONG_CHANGE
from memory.types import Exchange

_VOCAB = [
    "ya", "funciona", "gracias", "por", "todo", "otra", "cosa", "but", "pero", "no", "still",
    "sigue", "error", "factura", "cobro", "duplicado", "by", "the", "way", "otro", "tema",
    "eso", "es", "that", "fixed", "it", "new", "issue", "btw", "¿qué", "tal?", "Está",
    "bien.", "hola", "pedido", "#4821", "c++", "resuelto", "adiós", "bye", "anyway",
]  # fmt: skip
_ROOT = Path(__file__).resolve().parents[3]
_SESSIONS = _ROOT / "tests" / "data" / "topics" / "sessions.jsonl"
_LONGCASE = _ROOT / "bench" / "data" / "support_dev" / "longcase.jsonl"
_SEPARATORS = [" ", " ", " ", ". ", ", ", "? ", "! ", "\n", "; ", "¿"]
_texts = st.lists(
    st.tuples(st.sampled_from(_VOCAB), st.sampled_from(_SEPARATORS)), min_size=0, max_size=30
).map(lambda pairs: "".join(w + s for w, s in pairs))
# Cue lists of our own: repeated phrases, one-word and many-word phrases, and phrases with
# a word that is not a plain run of letters (always tried).
_phrases = st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=3).map(
    lambda words: text.fold(" ".join(words))
)
_cue_lists = st.lists(_phrases, min_size=0, max_size=12).map(tuple)
_LISTS = (CLOSURE, CONTINUATION, CONTRAST, NEW_REQUEST, SIDE_QUESTION, STRONG_CHANGE, NEW_PROBLEM)


def _reference_candidates(texts: tuple[str, ...], phrases: tuple[str, ...]) -> list[str]:
    """Before the index: every phrase of the list tested against the text's words."""
    present = frozenset().union(*map(text._plain_words, texts))
    return [phrase for phrase, needed in text._cues(phrases) if needed <= present]


@settings(max_examples=300, deadline=None)
@given(first=_texts, second=_texts, phrases=_cue_lists)
def test_indexed_cue_candidates_match_walking_the_whole_list(
    first: str, second: str, phrases: tuple[str, ...]
) -> None:
    """Looking up a text's cue words finds the same candidates, in the list's order."""
    for texts in ((first,), (first, second)):
        for cues in (*_LISTS, phrases):
            assert text._candidates(texts, cues) == _reference_candidates(texts, cues)


@settings(max_examples=200, deadline=None)
@given(message=_texts)
def test_cached_sentences_and_closing_are_the_plain_ones_and_fresh(message: str) -> None:
    """The cached sentence split and closing check answer as computed afresh, and a
    caller changing the list it got does not change the next answer."""
    plain = [part for part in text._SENTENCE.split(message) if part and part.strip()]
    got = text.sentences(message)
    assert got == plain
    got.append("mutated")
    assert text.sentences(message) == plain
    assert support.closes_then_moves_on(message) == _reference_closes_then_moves_on(message)


def _reference_closes_then_moves_on(message: str) -> bool:
    """Before the shortcut on the message's words: every sentence but the last read."""
    parts = text.sentences(message)
    for i, part in enumerate(parts[:-1]):
        if text.phrase_hits(part, CLOSURE) and not text.phrase_hits(part, CONTRAST):
            rest = " ".join(parts[i + 1 :])
            return len(text.term_set(rest) - text.term_set(part)) >= 3
    return False


def _corpus_texts() -> list[str]:
    """Every message and reply of the labelled topic sessions and the long support case."""
    out: list[str] = []
    for line in _SESSIONS.read_text(encoding="utf-8").splitlines():
        for exchange in json.loads(line)["exchanges"]:
            out += [exchange["user"], exchange.get("assistant") or ""]
    for line in _LONGCASE.read_text(encoding="utf-8").splitlines():
        out += [turn["content"] for turn in json.loads(line)["turns"]]
    return out


def test_closing_check_on_real_texts_matches_reading_every_sentence() -> None:
    """On every text of the labelled sessions and the long case, and on each with a
    closing sentence put first, the closing check answers as the plain one."""
    texts = _corpus_texts()
    assert len(texts) > 500
    closing = ("Eso es todo, gracias. ", "Solved, thanks! ", "Ya funciona. ¿", "No, resuelto no. ")
    for sample in texts:
        for message in (sample, *(lead + sample for lead in closing)):
            expected = _reference_closes_then_moves_on(message)
            assert support.closes_then_moves_on(message) == expected, message


def _window(pairs: list[tuple[str, str]]) -> tuple[Exchange, ...]:
    return tuple(Exchange(i + 1, 1, user, reply) for i, (user, reply) in enumerate(pairs))


def _ctx(message: str, window: tuple[Exchange, ...], summary: str) -> TopicContext:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return TopicContext(message, window, summary, now, now, 0.0, 0, "es")


@settings(max_examples=200, deadline=None)
@given(
    message=_texts,
    pairs=st.lists(st.tuples(_texts, _texts), max_size=6),
    summary=_texts,
)
def test_overlaps_by_difference_match_the_unions(
    message: str, pairs: list[tuple[str, str]], summary: str
) -> None:
    """Shared and in-window terms counted by what is left of the message's terms are
    the counts of the unions and the per-term walks they replaced."""
    window = _window(pairs)
    ctx = _ctx(message, window, summary)
    episode = (summary, *(t for e in window for t in (e.user_text, e.reply_text)))
    mine = text.term_set(message)
    union = frozenset().union(*map(text.term_set, episode))
    assert support.read_case(ctx).shared_terms == len(mine & union)
    reading = read_message(ctx, DEFAULT_TUNING)
    sets = [text.term_set(t) for e in window for t in (e.user_text, e.reply_text)]
    in_window = sum(1 for t in reading.terms if any(t in s for s in sets))
    share = in_window / len(reading.terms) if reading.terms else 0.0
    overlap = features._overlap(ctx, reading, support.read_case(ctx))
    assert overlap[features._AT["window_share"] - features._AT["novelty"]] == share


@settings(max_examples=200, deadline=None)
@given(
    message=_texts,
    pairs=st.lists(st.tuples(_texts, _texts), max_size=4),
    summary=_texts,
    rounds=st.integers(min_value=0, max_value=3),
)
def test_top_features_and_threshold_match_the_plain_ones(
    message: str, pairs: list[tuple[str, str]], summary: str, rounds: int
) -> None:
    """The strongest features by a sort are `heapq.nlargest`'s, and the threshold read
    from the vector by position is the one read from its named copy."""
    ctx = _ctx(message, _window(pairs), summary)
    model = load_model("support")
    row = features.extract(ctx)
    contributions = model.contributions(row.values)
    ranked = heapq.nlargest(3, contributions.items(), key=itemgetter(1))
    assert learned._top(contributions) == [[n, round(v, 3)] for n, v in ranked if v > 0]
    values = list(row.values)
    values[features._AT["summary_rounds_high"]] = float(rounds >= 2)
    row = features.Extracted(tuple(values), row.reading, row.case)
    named = row.named()
    explicit = named["new_request"] or named["other_family"]
    expected = model.threshold
    if named["summary_rounds_high"] and explicit:
        expected = learned.sigmoid(
            learned.math.log(expected / (1 - expected)) - learned.LONG_THREAD_LOGIT
        )
    assert learned._threshold(model, row) == expected
