"""Query and index terms: folding, function words, stemming, hard facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.recall.terms import HARD_WEIGHT, query_terms, stem, terms
from memory.text.stopwords import RECALL_STOP_WORDS


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("migré", "migración"),
        ("migrar", "Migración"),
        ("charged", "charge"),
        ("charging", "charges"),
        ("cambié", "cambiar"),
        ("configuración", "configure"),
        ("servidores", "servidor"),
        ("refunds", "refunded"),
    ],
)
def test_inflections_meet(a: str, b: str) -> None:
    """Inflected forms of one word become the same term (light stemming)."""
    assert terms(a) == terms(b)
    assert len(terms(a)) == 1


@pytest.mark.parametrize(("a", "b"), [("pedido", "pagué"), ("factura", "facil"), ("ns", "ip")])
def test_different_words_stay_apart(a: str, b: str) -> None:
    """Stemming is light: different words do not collapse into one term."""
    assert terms(a) != terms(b)


def test_case_and_accents_fold() -> None:
    """`MIGRACIÓN`, `migracion` and `Migración` are one term."""
    assert terms("MIGRACIÓN") == terms("migracion") == terms("Migración")


def test_function_words_of_both_languages_are_ignored() -> None:
    """Spanish and English function words and routine chat words give no terms."""
    assert terms("¿ya te lo dije a ti? gracias, and what was it for the one") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("la IP es 10.0.0.5.", "10_0_0_5"),
        ("pedido #4821", "4821"),
        ("order-731 shipped", "order_731"),
        ("escríbeme a Ana.Gil@Example.com", "ana_gil_example_com"),
        ("el 12/03/2024", "12_03_2024"),
        ("pagué 45,90 €", "45_90"),
    ],
)
def test_hard_facts_are_kept_whole(text: str, expected: str) -> None:
    """Ids, IPs, emails, dates and amounts are one exact term each."""
    assert expected in terms(text)


def test_long_digit_runs_of_an_id_are_terms_too() -> None:
    """`order-731` is found by "pedido 731": its digit run is indexed as well."""
    assert "731" in terms("order-731")


def test_hard_facts_weigh_most_and_come_first() -> None:
    """A fact in the message leads the query with the heaviest weight."""
    query = query_terms("¿cuándo migramos el servidor 10.0.0.5?")
    assert query[0].term == "10_0_0_5"
    assert query[0].hard
    assert query[0].weight == HARD_WEIGHT
    assert {q.term for q in query[1:]} >= {stem("migramos"), stem("servidor")}
    assert all(not q.hard and q.weight < HARD_WEIGHT for q in query[1:])


def test_query_is_distinct_and_bounded() -> None:
    """Repeated words give one term; a long message gives at most `limit` terms."""
    query = query_terms("factura factura factura " + " ".join(f"palabra{i}x" for i in range(30)))
    names = [q.term for q in query]
    assert len(names) == len(set(names)) == 12


@given(st.text(alphabet=st.characters(codec="latin-1"), max_size=200))
def test_terms_are_never_function_words(text: str) -> None:
    """No term is a function word, and every query term is a term of the message."""
    got = terms(text)
    assert not set(got) & RECALL_STOP_WORDS
    assert {q.term for q in query_terms(text)} <= set(got)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz áéíóúñ0123456789.-@", max_size=120))
def test_terms_ignore_case(text: str) -> None:
    """Upper and lower case give the same terms."""
    assert terms(text.upper()) == terms(text)


def test_a_word_whose_stem_is_a_function_word_gives_no_term() -> None:
    """ "THATA" stems to "that": a function word is never a term, stemmed or not."""
    assert terms("THATA") == []


def test_possessive_pronouns_are_function_words() -> None:
    """A question about "my dogs" that ends in "mine?" searches the dogs, not every "mine"."""
    assert terms("how many dogs are mine? theirs or yours?") == terms("many dogs")


def test_an_email_like_token_that_folds_to_a_function_word_gives_no_term() -> None:
    """An email-like token folded to a bare function word ("A@Þ" to "a") is no term."""
    assert terms("A@Þ") == []
