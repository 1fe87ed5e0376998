"""Ranking: BM25 over the key's statistics, minimum score, share of the best, duplicates."""

from __future__ import annotations

from math import log

from hypothesis import given
from hypothesis import strategies as st

from memory.recall.rank import K1, MIN_SCORE, B, Candidate, Hit, rank, score, searchable
from memory.recall.terms import QueryTerm, query_terms, terms
from memory.types import Exchange


def cand(i: int, text: str) -> Candidate:
    return Candidate(Exchange(i, 1, text, "ok"), tuple(terms(text)))


def df_of(cands: list[Candidate], total: int) -> tuple[dict[str, int], int]:
    df: dict[str, int] = {}
    for c in cands:
        for t in set(c.terms):
            df[t] = df.get(t, 0) + 1
    return df, total


def q(*words: str, hard: bool = False, weight: float = 1.0) -> tuple[QueryTerm, ...]:
    return tuple(QueryTerm(w, weight, hard) for w in words)


def test_rare_matches_beat_common_ones() -> None:
    """An exchange matching a rare term outranks one matching only a common term."""
    cands = [cand(i, "problema factura") for i in range(1, 10)]
    cands.append(cand(20, "problema migracion servidor"))
    df, docs = df_of(cands, 100)
    hits = rank(q("problem", "migr"), cands, df, docs, 3)
    assert hits[0].exchange.id == 20
    assert hits[0].matched == ("problem", "migr")


def test_a_common_word_alone_recalls_nothing() -> None:
    """A word in most exchanges is not searched, and scores under the minimum anyway."""
    cands = [cand(i, f"factura mensual {i}") for i in range(1, 40)]
    df, docs = df_of(cands, 40)
    assert searchable(q("factur"), df, docs) == ()
    assert rank(q("factur"), cands, df, docs, 5) == []


def test_one_shared_word_of_one_exchange_in_eight_is_recalled() -> None:
    """A question sharing a single word with the exchange that answers it ("my wife"),
    a word said in 1 of 8 exchanges, recalls it: at a cut-off of 3.0 it recalled nothing
    (the kept change of `bench.recall.ablation`)."""
    cands = [cand(i, f"wife {w} cooking") for i, w in enumerate(("doctor", "nurse"), 1)]
    df, docs = df_of(cands, 16)
    query = query_terms("what is my wife like?")
    assert [t.term for t in query] == ["wif", "lik"]
    (value, _) = score(query, cands[0].terms, df, docs, len(cands[0].terms))
    assert 1.5 <= MIN_SCORE < value < 3.0
    assert {h.exchange.id for h in rank(query, cands, df, docs, 5)} == {1, 2}


def test_hard_facts_are_searched_even_when_common() -> None:
    """A hard fact in the message is searched however often it was said."""
    df, docs = {"4821": 30, "factur": 30}, 40
    assert [t.term for t in searchable(q("4821", hard=True) + q("factur"), df, docs)] == ["4821"]


def test_hard_fact_weight_outranks_a_word() -> None:
    """The exchange with the order id wins over one that shares an ordinary word."""
    cands = [cand(1, "pedido 4821 enviado"), cand(2, "envio urgente urgente")]
    df, docs = df_of(cands, 50)
    query = (QueryTerm("4821", 4.0, True), QueryTerm("urgent", 1.0))
    hits = rank(query, cands, df, docs, 5)
    assert hits[0].exchange.id == 1


def test_near_duplicates_are_dropped() -> None:
    """The same exchange said twice is recalled once (the better, or newer, one)."""
    text = "cambie los ns del dominio ejemplo"
    cands = [cand(3, text), cand(9, text), cand(12, "otra cosa del dominio distinta")]
    df, docs = df_of(cands, 60)
    hits = rank(q("cambi", "ns", "domini"), cands, df, docs, 5)
    ids = [h.exchange.id for h in hits]
    assert ids.count(3) + ids.count(9) == 1
    assert ids[0] == 9  # equal scores: the newer is the current word on it


def test_weak_hits_beside_a_strong_one_are_cut() -> None:
    """A hit under a share of the best one's score does not ride along."""
    strong = cand(5, "router modelo xr500 reiniciado firmware actualizado")
    weak = [cand(i, f"firmware {i}") for i in range(10, 14)]
    cands = [strong, *weak]
    df, docs = df_of(cands, 200)
    hits = rank(q("router", "xr500", "reinici", "firmwar"), cands, df, docs, 8)
    assert hits[0].exchange.id == 5
    assert all(h.score >= hits[0].score * 0.25 for h in hits)


@given(
    st.lists(
        st.lists(st.sampled_from(["aa1", "bbb", "ccc", "ddd", "eee"]), max_size=8), max_size=25
    ),
    st.integers(min_value=1, max_value=6),
)
def test_hits_are_sorted_above_the_minimum_and_bounded(docs: list[list[str]], limit: int) -> None:
    """Whatever the candidates: at most `limit` hits, best first, all above the minimum."""
    cands = [Candidate(Exchange(i + 1, 1, " ".join(d), ""), tuple(d)) for i, d in enumerate(docs)]
    df, total = df_of(cands, max(len(cands), 1) * 3)
    hits: list[Hit] = rank(q("aa1", "ccc"), cands, df, total, limit)
    assert len(hits) <= limit
    assert all(h.score >= MIN_SCORE for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(set(h.matched) <= {"aa1", "ccc"} and h.matched for h in hits)


@given(
    st.lists(
        st.sampled_from(
            [
                "router caido",
                "router caido hoy",
                "factura 731",
                "factura 731 pagada",
                "migracion dns",
                "dns migrado ayer",
            ]
        ),
        min_size=1,
        max_size=25,
    ),
    st.integers(min_value=1, max_value=8),
)
def test_a_limit_keeps_the_same_best_hits_as_ranking_them_all(
    texts: list[str], limit: int
) -> None:
    """Stopping at `limit` (dedupe included) gives the first `limit` of the full ranking."""
    cands = [cand(i, text) for i, text in enumerate(texts, start=1)]
    df, docs = df_of(cands, 40)
    query = query_terms("el router, la factura 731, la migración del dns")
    assert len(query) >= 4
    assert rank(query, cands, df, docs, limit) == rank(query, cands, df, docs, 100)[:limit]


def test_score_is_okapi_bm25_with_repeats_counted() -> None:
    """A term said three times scores the Okapi BM25 of tf 3 (saturating, length
    normalised), and the matched terms are the query's, in query order."""
    doc = ("migr", "servid", "migr", "dns", "migr")
    df, docs, avg = {"migr": 2, "dns": 5, "factur": 1}, 50, 4.0
    value, matched = score(q("dns", "factur", "migr"), doc, df, docs, avg)

    def part(tf: int, n: int) -> float:
        norm = K1 * (1 - B + B * len(doc) / avg)
        return log(1 + (docs - n + 0.5) / (n + 0.5)) * tf * (K1 + 1) / (tf + norm)

    assert matched == ("dns", "migr")
    assert abs(value - (part(1, 5) + part(3, 2))) < 1e-9
    assert score(q("migr"), doc, df, docs, avg)[0] > score(q("migr"), doc[:2], df, docs, avg)[0]
