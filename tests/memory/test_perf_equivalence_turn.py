"""Per-turn fast paths (caches, early exits, one-pass loops) give what the plain code gave.

Each reference below is the code before the fast path, kept here verbatim; the property
tests compare both on generated texts and windows.
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from memory import noise, policy
from memory.topic.cues import CLOSURE, CONTINUATION, CONTRAST, INTENT_FAMILIES, NEW_REQUEST
from memory.topic.families import family_hits, family_hits_in
from memory.topic.text import new_request_hits, phrase_hits_in
from memory.types import Exchange

# Words that hit cues, families, failures and loops, so the generated texts do too.
_VOCAB = [
    "ya", "funciona", "gracias", "por", "todo", "otra", "cosa", "but", "pero", "no", "still",
    "sigue", "error", "factura", "cobro", "duplicado", "compra", "precio", "reclamo", "by",
    "the", "way", "sorry", "i", "cannot", "help", "with", "that", "lo", "siento", "puedo",
    "ayudarte", "try", "again", "¿qué", "cuánto?", "Está", "bien.", "hola", "pedido", "#4821",
]  # fmt: skip
_SEPARATORS = [" ", " ", " ", ". ", ", ", "? ", "! ", "\n", "; "]
_texts = st.lists(
    st.tuples(st.sampled_from(_VOCAB), st.sampled_from(_SEPARATORS)), min_size=0, max_size=40
).map(lambda pairs: "".join(w + s for w, s in pairs))


def _reference_all_failure(parts: list[str]) -> bool:
    sentences = [s for s in (noise._normalize(p) for p in parts) if s]
    if not any(noise._FAILURE_RE.fullmatch(s) for s in sentences):
        return False
    return all(noise._FAILURE_RE.fullmatch(s) or noise._FILLER_RE.fullmatch(s) for s in sentences)


def _reference_may_loop(words: list[str]) -> bool:
    frequent = {w for w, count in Counter(words).items() if count >= noise._LOOP_MIN_COPIES}
    if not frequent:
        return False
    return b"\x01" * noise._LOOP_MIN_SPAN in bytes(map(frequent.__contains__, words))


def _reference_repeated_sentence(text: str) -> bool:
    sentences = [noise._normalize(s) for s in noise._SENTENCE_SPLIT.split(text)]
    long_ones = [s for s in sentences if len(s.split()) >= noise._LOOP_SENTENCE_MIN_WORDS]
    if not long_ones:
        return False
    counts = Counter(long_ones)
    sentence, count = counts.most_common(1)[0]
    total = sum(len(s) for s in sentences if s) or 1
    share = len(sentence) * count / total
    return count >= noise._LOOP_SENTENCE_COUNT and share >= noise._LOOP_SENTENCE_SHARE


@settings(max_examples=300, deadline=None)
@given(text=_texts)
def test_noise_fast_paths_match_the_plain_checks(text: str) -> None:
    for splitter in (noise._SENTENCE_SPLIT, noise._CLAUSE_SPLIT):
        parts = splitter.split(text)
        assert noise._all_failure(parts) == _reference_all_failure(parts)
    words = noise._normalize(text).split()
    assert noise._may_loop(words) == _reference_may_loop(words)
    assert noise._has_repeated_sentence(text) == _reference_repeated_sentence(text)


def test_noise_fast_paths_on_loops_and_failures() -> None:
    for text in [
        "Lo siento, no puedo ayudarte con eso. Inténtalo de nuevo.",
        "I'm sorry, but I can't help with that. Anything else I can help you with?",
        "Sorry. Here is the answer you wanted.",
        "the same thing " * 20,
        "Reinicia el router ahora mismo. " * 5,
        "a b c d e f g h i j k",
    ]:
        assert noise._all_failure(noise._SENTENCE_SPLIT.split(text)) == _reference_all_failure(
            noise._SENTENCE_SPLIT.split(text)
        )
        words = noise._normalize(text).split()
        assert noise._may_loop(words) == _reference_may_loop(words)
        assert noise._has_repeated_sentence(text) == _reference_repeated_sentence(text)


@settings(max_examples=200, deadline=None)
@given(first=_texts, second=_texts)
def test_cached_cue_readings_match_uncached_and_are_fresh(first: str, second: str) -> None:
    """Tuples of cues go through the caches, lists do not: same answers, and a caller may
    change what it got without changing the next answer."""
    for cues in (CLOSURE, CONTINUATION, CONTRAST, NEW_REQUEST):
        got = phrase_hits_in((first, second), cues)
        assert got == phrase_hits_in([first, second], list(cues))
        got.append("mutated")
        assert "mutated" not in phrase_hits_in((first, second), cues)
    hits = new_request_hits(first, NEW_REQUEST)
    assert hits == new_request_hits(first, list(NEW_REQUEST))
    hits.append("mutated")
    assert "mutated" not in new_request_hits(first, NEW_REQUEST)
    counts = family_hits_in((first, second), INTENT_FAMILIES)
    assert list(counts.items()) == list(family_hits_in([first, second], INTENT_FAMILIES).items())
    counts["mutated"] = 1
    assert "mutated" not in family_hits_in((first, second), INTENT_FAMILIES)
    assert "mutated" not in family_hits(first, INTENT_FAMILIES)


def _count(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text)) + 1


def _reference_drop(window: list[Exchange], room: int) -> int:
    keep = list(window)
    while keep and policy._cost(keep, _count) > room:
        keep.pop(0)
    return len(window) - len(keep)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.tuples(_texts, _texts), min_size=0, max_size=8),
    message=_texts,
    budget=st.integers(min_value=0, max_value=600),
    summary_cap=st.integers(min_value=0, max_value=200),
)
def test_plan_request_drops_the_same_exchanges(
    texts: list[tuple[str, str]], message: str, budget: int, summary_cap: int
) -> None:
    window = [Exchange(i, 1, user, reply) for i, (user, reply) in enumerate(texts)]
    parts = policy.Parts("Sys", None, (), window, message)
    plan = policy.plan_request(
        parts,
        count=_count,
        budget=budget,
        summary_cap=summary_cap,
        language="es",
    )
    full = policy.assemble(parts, count=_count, budget=budget, language="es")
    assert full.tokens["window"] == sum(
        _count(e.user_text) + _count(e.reply_text) + 2 * policy.MESSAGE_OVERHEAD for e in window
    )
    if isinstance(plan, policy.FoldFirst):
        base = full.tokens["system"] + full.tokens["message"]
        room = budget - base - max(0, summary_cap + policy._label_cost(_count, "es"))
        dropped = _reference_drop(window, room)
        assert plan.exchanges == tuple(window[:dropped])
        assert plan.keep_window == len(window) - dropped
