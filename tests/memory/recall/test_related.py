"""Related words in a recall query: a question that shares no word with the exchange
that answers it still finds it, each related word weighing less than a word said."""

from __future__ import annotations

from memory.recall import related
from memory.recall.related import RELATED_MAX, expand, search_terms
from memory.recall.terms import QueryTerm, query_terms, terms


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
    for stem, near in table.items():
        assert near.keys() <= stems
        assert stem not in near
        assert all(0.45 <= cosine <= 1.0 for cosine in near.values())


def test_a_message_with_no_term_of_its_own_searches_nothing() -> None:
    """ "ok, thanks" has no term, so no related word either: recall stays quiet."""
    assert search_terms("ok, thanks") == ()
    assert search_terms("what car do i own?")[0] == QueryTerm("car", 1.0)
