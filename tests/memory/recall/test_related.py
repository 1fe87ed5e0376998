"""A question that shares no word with the exchange that answers it: related words in
the recall query (each weighing less than a word said), and the sentence embedding beside
BM25 (`memory.recall.dense`: the package's vectors read offline, a fusion that never
recalls more than BM25 did, the search in memory finding an exchange sharing no word)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.recall import dense, related
from memory.recall.block import piece
from memory.recall.hot import Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import Candidate, Hit
from memory.recall.related import RELATED_MAX, expand, search_terms
from memory.recall.terms import QueryTerm, query_terms, terms
from memory.types import Exchange


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


# -- the sentence embedding (`memory.recall.dense`) ------------------------------------

T0 = datetime(2026, 3, 2, tzinfo=UTC)
SAID = (
    "i love to watch a home run at the baseball game",
    "my home page has a blog about cooking pasta",
    "i got home late from the office again",
    "i live in a small town in california",
    "pizza with pineapple is my favourite food",
    "i play the guitar every evening after work",
)
FILLER = tuple(f"the weather was sunny and warm on day {n}" for n in range(30))


def exchange(exchange_id: int, text: str) -> Exchange:
    return Exchange(exchange_id, 1, text, "nice", True, None, T0)


def key_of(texts: tuple[str, ...]) -> KeyIndex:
    index = KeyIndex(1, 1)
    for n, text in enumerate(texts, start=1):
        index.add(Indexed(exchange(n, text), tuple(terms(f"{text}\nnice"))))
    return index


def hit(exchange_id: int) -> Hit:
    return Hit(exchange(exchange_id, f"text {exchange_id}"), 1.0, ("text",))


def test_the_package_vectors_load_offline_and_place_near_meanings_near() -> None:
    """The model loads from the package's own files; "dogs" is nearer dogs than pizza."""
    assert dense.available()
    question = dense.embed("how many dogs do i own?")
    near, far = dense.embed("i have two dogs at home"), dense.embed("i like pizza")
    assert question is not None
    assert near is not None
    assert far is not None
    assert question.shape == (dense.DIM,)
    assert abs(float(question @ question) - 1.0) < 1e-5
    assert float(question @ near) > float(question @ far) + 0.3


def test_a_message_of_stop_words_only_has_no_vector() -> None:
    """No content word, no vector: the search is BM25's alone."""
    assert dense.embed("what did you do?") is None
    assert dense.embed("") is None


def test_spanish_words_get_vectors_too() -> None:
    """A Spanish question is nearer the Spanish exchange that answers it."""
    question = dense.embed("¿dónde vivo?")
    near, far = dense.embed("vivo en un pueblo pequeño"), dense.embed("me gusta la pizza")
    assert question is not None
    assert near is not None
    assert far is not None
    assert float(question @ near) > float(question @ far) + 0.3


def test_a_message_of_words_the_vocabulary_splits_is_not_searched_by_meaning() -> None:
    """Spanish words cut into pieces give no query vector; English words do."""
    assert dense.query_vector("¿me mandáis la factura rectificativa?") is None
    assert dense.embed("¿me mandáis la factura rectificativa?") is not None
    english = dense.query_vector("how many dogs do i own?")
    assert english is not None
    assert english.shape == (dense.DIM,)


def test_fusion_adds_extra_places_only_when_the_lists_disagree_on_the_best() -> None:
    """Twenty nearest exchanges lengthen a two-hit search by `EXTRA` when BM25's best is
    not the nearest, not at all when it is, nor a search with no hit."""
    entries = {i: Candidate(exchange(i, f"text {i}"), ("text",)) for i in range(1, 30)}
    nearest = list(range(29, 9, -1))
    fused = dense.fuse([hit(1), hit(2)], nearest, entries)
    assert (dense.EXTRA, dense.AGREE) == (3, 1)
    assert [h.exchange.id for h in fused] == [1, 29, 2, 28, 27]
    assert [h.exchange.id for h in fused if h.matched == ()] == [29, 28, 27]
    agreed = dense.fuse([hit(1), hit(2)], [1, *nearest], entries)
    assert [h.exchange.id for h in agreed] == [1, 2]
    assert dense.fuse([], nearest, entries) == []
    many = [hit(i) for i in range(1, 21)]
    assert len(dense.fuse(many, nearest, entries)) == dense.SHOWN


def test_fusion_ranks_what_both_lists_hold_first_and_brings_in_the_nearest() -> None:
    """An exchange in both lists leads; one only the embedding found enters, unmatched."""
    entries = {i: Candidate(exchange(i, f"text {i}"), ("text",)) for i in range(1, 10)}
    fused = dense.fuse([hit(1), hit(2), hit(3)], [9, 3], entries, limit=3)
    assert [h.exchange.id for h in fused] == [3, 1, 9]
    assert fused[2].matched == ()
    assert fused[2].score == 0.0
    assert fused[0] is not None
    assert fused[0].matched == ("text",)


def test_nearest_skips_the_exchanges_at_or_after_the_bound() -> None:
    """The window's exchanges (id >= before) are never among the nearest."""
    vectors = dense.Vectors()
    for n, text in enumerate(SAID, start=1):
        vectors.add(n, text)
    question = dense.embed("where do i live?")
    assert len(vectors) == len(SAID)
    assert vectors.nearest(question, before=4)
    assert 4 not in vectors.nearest(question, before=4)
    assert vectors.nearest(question, before=1) == []
    assert vectors.nearest(question, before=None, top=1) == [4]


def test_the_search_in_memory_recalls_an_exchange_sharing_no_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "where is my home?" finds "i live in a small village" only with the message's vector."""
    monkeypatch.setattr(dense, "DENSE_TOP", 1)  # the nearest one only, in this small key
    said = (
        "the home team lost the football match on sunday night",
        "i love to watch a home run at the baseball game with friends and a hot dog",
        "i live in a small village",
    )
    index = key_of(said + FILLER)
    question = "where is my home?"
    plain = RecallQuery(1, 1, search_terms(question), None, 5)
    fused = RecallQuery(1, 1, search_terms(question), None, 5, None, dense.embed(question))
    without = [h.exchange.id for h in index.search(plain)]
    with_vector = [h.exchange.id for h in index.search(fused)]
    assert sorted(without) == [1, 2]
    assert with_vector == [without[0], 3, without[1]]  # the two disagree: a place more


def test_without_the_package_recall_is_bm25_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model: no vector for the message or the exchanges, the same hits as before."""
    question = "where is my home?"
    expected = [
        h.exchange.id
        for h in key_of(SAID).search(RecallQuery(1, 1, search_terms(question), None, 3))
    ]
    monkeypatch.setattr(dense, "_model", lambda: None)
    dense.embed.cache_clear()  # vectors cached by text while the model was there
    try:
        index = key_of(SAID)
        assert dense.embed(question) is None
        assert len(index.vectors) == 0
        query = RecallQuery(1, 1, search_terms(question), None, 3, None, dense.embed(question))
        assert [h.exchange.id for h in index.search(query)] == expected
    finally:
        dense.embed.cache_clear()  # no None cached for the tests after this one


def test_an_exchange_is_near_by_its_reply_too_and_shows_that_side() -> None:
    """ "where is your home?" finds the bot's "i live in a small village" under a user
    side about something else; the block shows that reply and cuts the user side."""
    vectors = dense.Vectors()
    vectors.add(1, "the weather was sunny and warm", "nice")
    vectors.add(2, "and you, where are you these days?", "i live in a small village")
    vectors.add(3, "i live in a small village", "nice")
    question = dense.embed("where is your home?")
    sides = dict(vectors.nearest_sides(question, before=None))
    assert sides[2] is True  # near by its reply
    assert sides[3] is False  # the same words said by the user: its user side leads
    assert next(iter(sides)) == 3  # a reply counts `REPLY_MARGIN` less than a user side
    near = Hit(Exchange(2, 1, "and you, where are you these days?", "i live in a small village",
                        True, None, T0), 0.0, (), near_reply=True)  # fmt: skip
    shown = piece(near, "en")
    assert "i live in a small village" in shown
    assert "where are you these days" not in shown
    entries = {2: Candidate(near.exchange, ())}
    [fused] = dense.fuse([hit(9)], [2], entries | {9: Candidate(hit(9).exchange, ())},
                         limit=3, by_reply=frozenset({2}))[1:]  # fmt: skip
    assert fused.near_reply
