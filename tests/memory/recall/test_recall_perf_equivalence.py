"""The in-memory search's fast paths (the ranking fed the term counts its postings walk
read, no selection when every match is a candidate, near-duplicates found in one loop
that decides most pairs by their sizes) give the hits the plain code gave (issue 29).
The references are the code before them, kept here."""

from __future__ import annotations

import heapq
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.recall.hot import Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import (
    CANDIDATES,
    COUNT_CAP,
    DUPLICATE,
    K1,
    B,
    Candidate,
    Hit,
    _jaccard,
    dedupe,
    rank,
    searchable,
    weights,
)
from memory.recall.terms import QueryTerm
from memory.types import Exchange

_WORDS = ["router", "clave", "pedido", "4821", "factura", "cobro", "wifi", "caido", "otra"]
_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _reference(index: KeyIndex, query: RecallQuery) -> list[Hit]:
    """The search before the fast paths: every candidate's terms counted by the ranking."""
    if not query.terms or query.limit <= 0 or not index.entries:
        return []
    wanted = searchable(query.terms, index.df, index.docs)
    if not wanted:
        return []
    bound = query.before if query.before is not None else 2**62
    avg = max(index.terms / len(index.entries), 1.0)
    fixed, per_term = K1 * (1 - B), K1 * B / avg
    scores: dict[int, float] = {}
    for term, weight in weights(wanted, index.df, index.docs):
        found = index.postings.get(term)
        if found is None:
            continue
        for exchange_id, tf in zip(*found, strict=True):
            if exchange_id >= bound:
                break
            norm = fixed + per_term * index.lengths[exchange_id]
            scores[exchange_id] = scores.get(exchange_id, 0.0) + weight * (K1 + 1) * tf / (
                tf + norm
            )
    if not scores:
        return []
    best = heapq.nlargest(CANDIDATES, scores, key=lambda i: (scores[i], i))
    chosen = [index.entries[i] for i in best]
    return rank(wanted, chosen, index.df, index.docs, query.limit)


_doc = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12)
_query = st.lists(
    st.tuples(st.sampled_from(_WORDS), st.sampled_from([1.0, 2.0, 0.7]), st.booleans()),
    min_size=1,
    max_size=5,
    unique_by=lambda q: q[0],
)


def _index(docs: list[list[str]], flood: int | None) -> KeyIndex:
    index = KeyIndex(1, 1)
    for n, words in enumerate(docs, start=1):
        if n == flood:  # one exchange saying a word more times than a posting can count
            words = [*words, *["router"] * (COUNT_CAP + 45)]
        ex = Exchange(n, 1, " ".join(words), "", True, None, _T0)
        index.add(Indexed(ex, tuple(words)))
    return index


@settings(max_examples=300, deadline=None)
@given(
    docs=st.lists(_doc, min_size=1, max_size=70),
    query=_query,
    before=st.one_of(st.none(), st.integers(min_value=1, max_value=75)),
    limit=st.integers(min_value=1, max_value=20),
    flood=st.one_of(st.none(), st.integers(min_value=1, max_value=70)),
)
def test_search_in_memory_gives_the_hits_of_counting_every_candidate(
    docs: list[list[str]],
    query: list[tuple[str, float, bool]],
    before: int | None,
    limit: int,
    flood: int | None,
) -> None:
    """Same hits, scores to the last bit, matched terms in the same order: with fewer
    matches than candidates, with more, and past a posting's count cap."""
    index = _index(docs, flood)
    terms = tuple(QueryTerm(term, weight, hard) for term, weight, hard in query)
    search = RecallQuery(1, 1, terms, before, limit)
    assert index.search(search) == _reference(index, search)


def test_a_count_past_the_cap_is_counted_in_full() -> None:
    """An exchange saying a word 300 times scores as 300, not as the posting's 255."""
    index = _index([["router", "clave"], ["clave", "wifi"], ["otra"]] * 4, flood=1)
    search = RecallQuery(1, 1, (QueryTerm("router", 1.0, hard=True),), None, 8)
    hits = index.search(search)
    assert hits == _reference(index, search)
    assert hits[0].exchange.id == 1
    assert index.postings["router"][1][0] == COUNT_CAP


def _reference_dedupe(
    hits: list[Hit], by_id: dict[int, Candidate], limit: int | None
) -> list[Hit]:
    """Before the one loop: each hit's Jaccard against every kept one, by a generator."""
    kept: list[tuple[Hit, frozenset[str]]] = []
    for hit in hits:
        if limit is not None and len(kept) >= limit:
            break
        mine = frozenset(by_id[hit.exchange.id].terms)
        if all(_jaccard(mine, theirs) < DUPLICATE for _, theirs in kept):
            kept.append((hit, mine))
    return [hit for hit, _ in kept]


# Sets of 0 to 10 of 14 words: Jaccards of exactly 0.7 (7 of 10 shared) and empty sets too.
_terms = st.lists(st.sampled_from([f"w{i}" for i in range(14)]), max_size=10)


@settings(max_examples=400, deadline=None)
@given(
    docs=st.lists(_terms, min_size=0, max_size=25),
    limit=st.one_of(st.none(), st.integers(min_value=0, max_value=25)),
)
def test_dedupe_keeps_what_comparing_every_pair_kept(
    docs: list[list[str]], limit: int | None
) -> None:
    """Deciding most pairs by their sizes keeps and drops the same hits, in order, at
    a Jaccard of exactly the threshold and between empty exchanges as well."""
    by_id = {
        n: Candidate(Exchange(n, 1, "", "", True, None, _T0), tuple(terms))
        for n, terms in enumerate(docs, start=1)
    }
    hits = [Hit(c.exchange, 1.0, ()) for c in by_id.values()]
    assert dedupe(hits, by_id, limit) == _reference_dedupe(hits, by_id, limit)


def test_a_jaccard_of_exactly_the_threshold_is_a_duplicate() -> None:
    """Seven shared of ten is 0.7: the second exchange is dropped, as before."""
    first = Candidate(Exchange(1, 1, "", "", True, None, _T0), tuple("abcdefghij"))
    second = Candidate(Exchange(2, 1, "", "", True, None, _T0), tuple("abcdefg"))
    by_id = {1: first, 2: second}
    hits = [Hit(first.exchange, 2.0, ()), Hit(second.exchange, 1.0, ())]
    assert dedupe(hits, by_id) == [hits[0]] == _reference_dedupe(hits, by_id, None)
