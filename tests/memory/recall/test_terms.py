"""Query and index terms: folding, function words, stemming, hard facts; and the related
words a query adds (`memory.recall.related`), each weighing less than a word said."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.recall import related
from memory.recall.related import RELATED_MAX, expand, search_terms
from memory.recall.terms import HARD_WEIGHT, QueryTerm, query_terms, stem, terms
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


# -- related words (`memory.recall.related`) ---------------------------------------------


def test_a_word_brings_its_related_words_after_the_words_said() -> None:
    """ "car" also searches "vehicle" and "sedan", after the message's own terms and
    lighter than them (the cosine times the word's own weight)."""
    own = query_terms("what car do i own?")
    query = expand(own)
    assert query[: len(own)] == own
    extra = {q.term: q.weight for q in query[len(own) :]}
    assert {"vehicl", "sedan"} <= extra.keys()
    assert all(0 < weight < 1.0 for weight in extra.values())
    assert not any(q.hard for q in query[len(own) :])


def test_hard_facts_are_not_expanded_and_no_term_comes_twice() -> None:
    """An order id is searched as said, nothing near it; a related word the message
    already says is not added again."""
    query = expand((QueryTerm("order_731", 4.0, hard=True), QueryTerm("car", 1.0)))
    assert [q.term for q in query].count("car") == 1
    assert expand((QueryTerm("order_731", 4.0, hard=True),)) == (
        QueryTerm("order_731", 4.0, hard=True),
    )
    both = expand(query_terms("my car, a sedan"))
    assert [q.term for q in both].count("sedan") == 1


def test_a_query_adds_at_most_related_max_words_the_heaviest_first() -> None:
    """However many words have neighbours, at most `RELATED_MAX` related terms are added,
    heaviest first."""
    own = query_terms("music doctor car dog job guitar vehicle pet")
    extra = expand(own)[len(own) :]
    assert 0 < len(extra) <= RELATED_MAX
    assert [q.weight for q in extra] == sorted((q.weight for q in extra), reverse=True)


def test_the_table_speaks_the_index_own_stems() -> None:
    """The file holds words; the loaded table holds what the index writes for them (one
    stem a word), never a word's own stem among its neighbours, each with a cosine
    between the build's threshold and 1."""
    words = related.read_words()
    said = {w for word, near in words.items() for w in (word, *(n for n, _ in near))}
    stems = {t[0] for w in said if len(t := terms(w)) == 1}
    table = related.table()
    assert len(table) > 1000
    assert table.keys() <= stems
    for word, near in table.items():
        assert near.keys() <= stems
        assert word not in near
        assert all(0.45 <= cosine <= 1.0 for cosine in near.values())


def test_a_message_with_no_term_of_its_own_searches_nothing() -> None:
    """ "ok, thanks" has no term, so no related word either: recall stays quiet."""
    assert search_terms("ok, thanks") == ()
    assert search_terms("what car do i own?")[0] == QueryTerm("car", 1.0)
