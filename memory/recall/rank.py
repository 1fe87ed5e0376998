"""Ranking recalled exchanges: BM25 over one key's own statistics, then the policy.

Pure. The index hands over candidates (each with its indexed terms) and the key's
document frequencies; this module scores them (Okapi BM25, query terms weighted: hard
facts count `HARD_WEIGHT` words), keeps what clears `MIN_SCORE` and a share of the best,
and drops near-duplicates, so a routine message recalls nothing and a long case does not
fill the block with the same exchange said ten times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from memory.recall.terms import QueryTerm
from memory.types import Exchange

K1 = 1.2
B = 0.75
# One match on a term found in 1 of ~8 exchanges of an average length. At 3.0 (1 of ~20)
# a question sharing one word with the exchange that answers it ("my name", "my wife")
# recalled nothing in a long chat whose words recur: TIAGE train-built conversations
# 0.54 → 0.58 answer in request (`bench.recall.ablation`); `bench.recall` the same.
MIN_SCORE = 1.5
# The best BM25 matches each backend (in memory, FTS5, PostgreSQL) hands to `rank`: at 20
# a long chat's answer was often the 21st match of a common word (0.58 → 0.70 with 30
# and `LIMIT` 20; more changed nothing).
CANDIDATES = 30
LIMIT = 20  # hits ranked per turn; the block's token share decides how many show
BEST_SHARE = 0.25  # a hit under a quarter of the best one's score is noise next to it
COMMON_SHARE = 0.1  # a word in more than this share of the key's exchanges is not searched
DUPLICATE = 0.7  # Jaccard of term sets at or above which two exchanges say the same


@dataclass(frozen=True, slots=True)
class Candidate:
    """An indexed exchange that matched at least one query term, with its terms."""

    exchange: Exchange
    terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """A recalled exchange: its score and the query terms it matched (for operators)."""

    exchange: Exchange
    score: float
    matched: tuple[str, ...]
    previous: bool = False  # of the episode a recent automatic reset closed
    near_reply: bool = False  # found by the embedding alone, by its reply (`dense`)


def idf(df: int, docs: int) -> float:
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def searchable(
    query: Sequence[QueryTerm], df: Mapping[str, int], docs: int
) -> tuple[QueryTerm, ...]:
    """The query terms worth a search: present in the key's index, and (unless hard
    facts) not so common that they match a large share of its exchanges."""
    limit = max(1.0, COMMON_SHARE * docs)
    return tuple(
        q for q in query if df.get(q.term, 0) > 0 and (q.hard or df.get(q.term, 0) <= limit)
    )


def score(
    query: Sequence[QueryTerm], terms: Sequence[str], df: Mapping[str, int], docs: int, avg: float
) -> tuple[float, tuple[str, ...]]:
    """BM25 of one document for the weighted query, and the query terms it contains."""
    return _score(weights(query, df, docs), terms, avg)


def weights(
    query: Sequence[QueryTerm], df: Mapping[str, int], docs: int
) -> tuple[tuple[str, float], ...]:
    """Each query term with its weight × idf: the same for every candidate of a search."""
    return tuple((q.term, q.weight * idf(df.get(q.term, 1), docs)) for q in query)


def _score(
    weights: Sequence[tuple[str, float]], terms: Sequence[str], avg: float
) -> tuple[float, tuple[str, ...]]:
    # Only the query's few terms are counted (a C-level scan of the tuple each), not
    # every term of the document: a third of the ranking's cost went to the Counter.
    norm = K1 * (1 - B + B * len(terms) / max(avg, 1.0))
    total, matched = 0.0, []
    for term, weight in weights:
        n = terms.count(term)
        if n:
            total += weight * n * (K1 + 1) / (n + norm)
            matched.append(term)
    return total, tuple(matched)


# Per candidate's exchange id: (position in the query, times the exchange holds that
# term) for each query term it holds, in query order; a count of `COUNT_CAP` or more
# stands for "at least that many" (an in-memory posting keeps one byte).
Counts = Mapping[int, Sequence[tuple[int, int]]]
COUNT_CAP = 255


def rank(
    query: Sequence[QueryTerm],
    candidates: Sequence[Candidate],
    df: Mapping[str, int],
    docs: int,
    limit: int,
    counts: Counts | None = None,
) -> list[Hit]:
    """The best `limit` hits, best first: score, then more terms matched, then newer.
    `counts`: what the caller already knows of the candidates' term counts (the search
    in memory reads them from its postings), so the terms are not counted again."""
    if not candidates:
        return []
    avg = sum(len(c.terms) for c in candidates) / len(candidates)
    weighted = weights(query, df, docs)
    hits = []
    for c in candidates:
        if counts is None:
            value, matched = _score(weighted, c.terms, avg)
        else:
            value, matched = _score_counted(weighted, c, counts[c.exchange.id], avg)
        if value >= MIN_SCORE:
            hits.append(Hit(c.exchange, round(value, 3), matched))
    hits.sort(key=lambda h: (-h.score, -len(h.matched), -h.exchange.id))
    if not hits:
        return []
    floor = hits[0].score * BEST_SHARE
    by_id = {c.exchange.id: c for c in candidates}
    return dedupe([h for h in hits if h.score >= floor], by_id, limit)


def _score_counted(
    weights: Sequence[tuple[str, float]],
    candidate: Candidate,
    counted: Sequence[tuple[int, int]],
    avg: float,
) -> tuple[float, tuple[str, ...]]:
    """`_score` from counts known already: the same terms in the same order, so the
    same sum to the last bit."""
    norm = K1 * (1 - B + B * len(candidate.terms) / max(avg, 1.0))
    total, matched = 0.0, []
    for at, n in counted:
        term, weight = weights[at]
        if n >= COUNT_CAP:  # capped: count it
            n = candidate.terms.count(term)
        total += weight * n * (K1 + 1) / (n + norm)
        matched.append(term)
    return total, tuple(matched)


def rank_with_previous(
    query: Sequence[QueryTerm],
    current: Sequence[Candidate],
    previous: Sequence[Candidate],
    df: Mapping[str, int],
    docs: int,
    limit: int,
) -> list[Hit]:
    """`rank` of each episode's candidates over the key's same statistics: the hits of
    the episode a recent automatic reset closed first (the new message is about the old
    case when it matches it at all), then the current episode's; near-duplicates out."""
    before = [replace(h, previous=True) for h in rank(query, previous, df, docs, limit)]
    hits = [*before, *rank(query, current, df, docs, limit)]
    by_id = {c.exchange.id: c for c in (*current, *previous)}
    return dedupe(hits, by_id, limit)


def dedupe(
    hits: Sequence[Hit], by_id: Mapping[int, Candidate], limit: int | None = None
) -> list[Hit]:
    """Drop a hit whose terms are nearly those of a better one already kept; stop once
    `limit` are kept (the same first ones: each is kept or dropped by the ones before)."""
    kept: list[Hit] = []
    seen: list[tuple[frozenset[str], int]] = []  # the kept ones' term sets and sizes
    for hit in hits:
        if limit is not None and len(kept) >= limit:
            break
        mine = frozenset(by_id[hit.exchange.id].terms)
        if not _duplicates(mine, seen):
            kept.append(hit)
            seen.append((mine, len(mine)))
    return kept


def _duplicates(mine: frozenset[str], seen: Sequence[tuple[frozenset[str], int]]) -> bool:
    """Whether `_jaccard(mine, theirs) >= DUPLICATE` for any of `seen`, in one loop (a
    generator and a call per pair were most of the ranking's time on long chats). Two
    sets share at most the smaller one, so their Jaccard is at most smaller ÷ larger, and
    a correctly rounded division keeps that order: most pairs are decided by their sizes."""
    n = len(mine)
    for theirs, size in seen:
        if n < size:
            if n / size < DUPLICATE:
                continue
        elif size < n and size / n < DUPLICATE:
            continue
        common = len(mine & theirs)
        union = n + size - common
        if not union or common / union >= DUPLICATE:  # two empty sets are the same
            return True
    return False


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)  # |a ∪ b| without building it
