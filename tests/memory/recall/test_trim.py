"""A recalled side cut to the sentences the search matched, hard facts kept."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.recall.block import render
from memory.recall.rank import Hit
from memory.recall.terms import terms
from memory.recall.trim import GAP, trimmed
from memory.types import Exchange


def test_unmatched_sentences_become_one_gap_per_run() -> None:
    """Only the sentences with a matched term stay; each run of the others is one gap."""
    text = "Hello there. I drive a big truck! Nice weather. Sunny too. My truck is red."
    assert trimmed(text, terms("truck")) == f"{GAP} I drive a big truck! {GAP} My truck is red."


def test_a_sentence_with_a_hard_fact_stays() -> None:
    """A sentence holding an id, a date or an amount is kept though no term matched it."""
    text = "Thanks for waiting. Your order is order-7731. The router is fine."
    assert trimmed(text, terms("router")) == f"{GAP} Your order is order-7731. The router is fine."


def test_a_side_without_a_match_or_of_one_sentence_stays_whole() -> None:
    """Nothing matched, everything matched, or one sentence: the side is shown as said."""
    text = "I like cats. They purr a lot."
    assert trimmed(text, terms("dog")) == text
    assert trimmed(text, terms("cats purr")) == text
    assert trimmed("I like cats and dogs", terms("dog")) == "I like cats and dogs"


def test_the_block_shows_the_trimmed_sides() -> None:
    """A recalled exchange reaches the request cut to what the search matched."""
    at = datetime(2026, 3, 3, 10, 30, tzinfo=UTC)
    said = "Good morning. My wife is a nurse. It rained all day."
    exchange = Exchange(4, 1, said, "That sounds hard.", created_at=at)
    block = render([Hit(exchange, 5.0, tuple(terms("wife")))], 500, lambda t: len(t.split()), "en")
    assert f"User: {GAP} My wife is a nurse. {GAP}\nAssistant: That sounds hard." in block.text
    assert "rained" not in block.text
