"""Related words for a recall query: "my car" also searches `vehicle`, "my job" `career`.

A question often shares no word with the exchange that answers it ("what vehicle is
mine?" against "i drive a sedan"); BM25 over the words alone cannot find it. The shipped
table (`models/related-v2.tsv.gz`, built by `bench.recall.related` from the static
embedding of a package, no data set of ours in it) gives each word its nearest words
with their cosine. `expand` adds a query's related terms at `RELATED_WEIGHT` × cosine ×
the word's own weight: a related match counts less than the word itself, and a message
whose only match is a related word of one common word scores under the ranking's cut.

Pure, loaded once (about 6,700 words), stemmed here with the index's own `terms`, so the
table agrees with whatever the index writes.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from functools import cache
from importlib import resources

from memory.recall.terms import QueryTerm, query_terms, terms

MODEL_FILE = "related-v2.tsv.gz"
# Measured on TIAGE train-built conversations (`bench.recall.ablation`; the table holds
# no TIAGE word choice): at 0.3 × cosine a related match never cleared `MIN_SCORE`;
# 0.8–1.2 gave the same answers (0.71 → 0.79–0.80), so the weight is the cosine itself.
RELATED_WEIGHT = 1.0
RELATED_MAX = 6  # related terms a query adds at most, heaviest first


def read_words(name: str = MODEL_FILE) -> dict[str, list[tuple[str, float]]]:
    """The shipped file as written: word → [(neighbour, cosine)], nearest first."""
    return parse(resources.files("memory.recall").joinpath("models", name).read_bytes())


def parse(data: bytes) -> dict[str, list[tuple[str, float]]]:
    """A gzipped table: `#` comment lines, then `word<TAB>near:cos near:cos …`."""
    out: dict[str, list[tuple[str, float]]] = {}
    for line in gzip.decompress(data).decode("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition("\t")
        pairs = [item.rpartition(":") for item in rest.split()]
        out[word] = [(near, float(cos)) for near, _, cos in pairs]
    return out


@cache
def table() -> dict[str, dict[str, float]]:
    """Stem → {related stem: cosine}: words of one stem merged (the best cosine kept);
    a neighbour of the word's own stem, or a function word, dropped."""
    out: dict[str, dict[str, float]] = {}
    for word, near in read_words().items():
        stems = terms(word)
        if len(stems) != 1:
            continue
        mine = out.setdefault(stems[0], {})
        for other, cosine in near:
            related = terms(other)
            if len(related) != 1 or related[0] == stems[0]:
                continue
            if cosine > mine.get(related[0], 0.0):
                mine[related[0]] = cosine
    return {stem: near for stem, near in out.items() if near}


def search_terms(message: str) -> tuple[QueryTerm, ...]:
    """What recall searches for `message`: its own terms (`query_terms`), then their
    related words (`expand`); nothing when the message has no term of its own."""
    own = query_terms(message)
    return expand(own) if own else own


def expand(query: Sequence[QueryTerm], limit: int = RELATED_MAX) -> tuple[QueryTerm, ...]:
    """`query` and, after it, at most `limit` related terms not already in it."""
    have = {q.term for q in query}
    related = table()
    extra: dict[str, float] = {}
    for q in query:
        if q.hard:
            continue
        for term, cosine in related.get(q.term, {}).items():
            if term not in have:
                weight = RELATED_WEIGHT * cosine * q.weight
                if weight > extra.get(term, 0.0):
                    extra[term] = weight
    best = sorted(extra.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return (*query, *(QueryTerm(term, round(weight, 3)) for term, weight in best))
