"""The topic check's shared facts: the same count as extracting every text, and the
facts of a text that cannot share one are never extracted (issue 29)."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.facts import extract_facts, facts_of
from memory.topic.support import shared_fact_count

_VOCAB = [
    "pedido", "#4821", "#A-5521", "order-731", "PED-310", "el", "3", "de", "marzo",
    "12/03/2024", "1.250,50", "€", "+34", "612", "345", "678", "lucia@example.com",
    "10.0.0.5", "calle", "Alcalá", "214", "28028", "Madrid", "cliente", "C1079", "Straße",
    "İstanbul", "ß", "SS", "a", "las", "10:30", "ORDER-731", "soy", "Lucía", "Moreno", "cajas",
]  # fmt: skip
_texts = st.lists(st.sampled_from(_VOCAB), max_size=14).map(" ".join)


def _reference(message: str, texts: tuple[str, ...]) -> int:
    """The count before the substring test: every text's facts extracted."""

    def values(text: str) -> frozenset[str]:
        return frozenset(
            f.value.casefold()
            for f in extract_facts(text)
            if f.kind not in ("time", "count") and not (f.kind == "named" and " " not in f.value)
        )

    return len(values(message) & frozenset().union(*map(values, texts)))


@settings(max_examples=300, deadline=None)
@given(_texts, st.lists(_texts, max_size=5).map(tuple))
def test_shared_fact_count_matches_extracting_every_text(
    message: str, texts: tuple[str, ...]
) -> None:
    """Skipping the texts that hold none of the message's values changes no count."""
    assert shared_fact_count(message, texts) == _reference(message, texts)


def test_a_text_without_the_messages_values_is_never_extracted() -> None:
    """Only the message's own facts are extracted when the window shares none of them."""
    tag = f"t{uuid.uuid4().hex[:7]}"  # a letter first: never a bare number
    message = f"Mi pedido #4821 ({tag}) sigue sin llegar"
    reply = f"Gracias, lo reviso ({tag}) y te aviso del siguiente paso el 3 de marzo."
    before = facts_of.cache_info().misses
    assert shared_fact_count(message, (reply,)) == 0
    assert facts_of.cache_info().misses - before == 1  # the message, not the reply


def test_a_message_without_facts_extracts_nothing_else() -> None:
    """A message with no facts shares none: the episode's texts are left alone."""
    tag = f"t{uuid.uuid4().hex[:7]}"  # a letter first: never a bare number
    before = facts_of.cache_info().misses
    assert shared_fact_count(f"hola, una duda {tag}", (f"pedido #4821 {tag}",)) == 0
    assert facts_of.cache_info().misses - before == 1


def test_the_summary_is_read_only_for_a_value_nothing_shorter_gave() -> None:
    """A value already found in the window does not make the long summary be read."""
    tag = f"t{uuid.uuid4().hex[:7]}"  # a letter first: never a bare number
    said = f"Mi pedido #4821 ({tag})"
    summary = f"- Usuario dijo: «Mi pedido #4821 ({tag}) no llega; pagué 30 € el 3 de marzo»"
    assert shared_fact_count(said, (said,)) == 1  # the window's text, extracted once
    before = facts_of.cache_info().misses
    assert shared_fact_count(f"{said} sigue igual", (summary, said)) == 1
    assert facts_of.cache_info().misses - before == 1  # the new message alone


def test_a_name_of_one_word_is_no_topic_fact() -> None:
    """The fact guard keeps "Mississauga"; the topic check, fitted without such names,
    does not count it (a name of two words it does)."""
    assert "mississauga" in {f.value.casefold() for f in facts_of("stuck in Mississauga")}
    assert shared_fact_count("still stuck in Mississauga", ("it is in Mississauga",)) == 0
    assert shared_fact_count("it went to Brightside Cleaning", ("Brightside Cleaning",)) == 1


def test_a_count_is_no_topic_fact() -> None:
    """The fact guard keeps "2 adults"; the topic check, fitted without counts, does not
    count it, while the booking's reference still is a shared fact."""
    assert ("count", "2 adults") in {(f.kind, f.value) for f in facts_of("yes 2 adults")}
    assert shared_fact_count("yes 2 adults", ("for 2 adults please",)) == 0
    assert shared_fact_count("SLF-7Q2K9M, 2 adults", ("booking SLF-7Q2K9M",)) == 1
