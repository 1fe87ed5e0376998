"""Ranking ideas for recall, each on and off, on the sets they may be tuned on.

    python -m bench.recall.ablation [--shuffles 3] [--quick]

Three sets: TIAGE train-built conversations (`bench.data.public_dialogues`, never the dev
split `bench.recall.public` scores), asked about the user's disclosures and, apart, about
the other speaker's ("where is your home?"), and `bench.recall`'s two support cases. No replay:
each conversation is indexed in memory (`memory.recall.hot.KeyIndex`, the terms and the
ranking every backend uses), each probe searched (`query_terms`, the engine's limit),
its block rendered (`memory.recall.block.render`, the default token share), and the
answer looked for in the block. Plain BM25 (`bench.recall.bm25_pick`) gets the block's
tokens plus `SUMMARY`, what ventana's request spends beyond the block and the window on
TIAGE chats (its summary and pending exchanges; dev and train replays: 165 to 190 tokens
since the summary's gist share, `extractive-v3`; 400 to 460 before), where none of the
answers is, as in the replay's equal-token arm. On `bench.recall`'s cases the summary holds
answers of its own (75 %), so there plain BM25 gets the block's tokens only: compare its
rows with each other; `bench.recall` compares whole requests.

Ideas: the kept ones are module constants of `memory.recall.rank` or `dense` (set back to their
old values to switch them off); the others are written here, over the product's hits,
as they were tried: none changed the answers by more than a probe or two.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from bench.common import percentile, quiet_logs
from bench.data.public_dialogues import conversations
from bench.data.recall_cases import case
from bench.recall import bm25_pick
from memory.recall import dense, hot, rank, rerank
from memory.recall.block import Costs, render
from memory.recall.hot import Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import Hit
from memory.recall.related import search_terms
from memory.recall.terms import QueryTerm, query_terms, terms
from memory.tokens import default_tokenizer
from memory.types import Exchange

WINDOW = 6
SUMMARY = 180  # tokens: ventana's request beyond block and window on TIAGE (see the docstring)
BUDGET = 1000
Rerank = Callable[[list[Hit], KeyIndex], list[Hit]]


@dataclass(frozen=True, slots=True)
class Case:
    language: str
    index: KeyIndex
    older: list[tuple[str, str]]  # the exchanges before the window, as plain BM25 sees them
    probes: list[tuple[str, str]]  # question, answer
    before: int
    summary: int  # tokens plain BM25 gets beyond the block's


@dataclass(frozen=True, slots=True)
class Idea:
    name: str
    constants: dict[str, float] = field(default_factory=dict)  # of `memory.recall.rank`
    rerank: Rerank | None = None
    expand: Callable[[tuple[QueryTerm, ...], KeyIndex], tuple[QueryTerm, ...]] | None = None
    related: bool = True  # the product's related words (`memory.recall.related`)
    dense: bool = True  # the product's sentence embedding (`memory.recall.dense`)


def index(
    language: str,
    exchanges: Sequence[tuple[str, str, datetime | None]],
    probes: list[tuple[str, str]],
    summary: int = SUMMARY,
) -> Case:
    key = KeyIndex(1, 1)
    for n, (user, reply, at) in enumerate(exchanges, start=1):
        key.add(
            Indexed(Exchange(n, 1, user, reply, True, None, at), tuple(terms(f"{user}\n{reply}")))
        )
    older = [(f"[{at:%Y-%m-%d %H:%M}] {u}" if at else u, a) for u, a, at in exchanges[:-WINDOW]]
    return Case(language, key, older, probes, len(exchanges) - WINDOW + 1, summary)


def tiage_train(shuffles: int, bot: bool = False) -> list[Case]:
    """TIAGE train-built conversations, probed about the user's disclosures or, with
    `bot`, the other speaker's."""
    return [
        index(
            "en",
            c.exchanges,
            [(p.question, p.answer) for p in (c.bot_probes if bot else c.probes)],
        )
        for c in conversations("train", shuffles=shuffles)
    ]


def support_cases(exchanges: int) -> list[Case]:
    out = []
    for language in ("es", "en"):
        lines = case(language, exchanges)
        said = [x for x in lines if not x.probe]
        pairs = [(said[i].content, said[i + 1].content, None) for i in range(0, len(said), 2)]
        probes = [(x.content, x.detail.answer) for x in lines if x.probe and x.detail]
        out.append(index(language, pairs, probes, summary=0))
    return out


@contextmanager
def constants(values: dict[str, float]) -> Iterator[None]:
    """`memory.recall.rank`'s, `dense`'s or `rerank`'s constants set for a run (`hot`
    imports `CANDIDATES` and `SHOWN`)."""
    owner = {name: next(m for m in (rank, dense, rerank) if hasattr(m, name)) for name in values}
    old = {name: getattr(owner[name], name) for name in values}
    try:
        for name, value in values.items():
            setattr(owner[name], name, value)
            if hasattr(hot, name):
                setattr(hot, name, value)
        yield
    finally:
        for name, value in old.items():
            setattr(owner[name], name, value)
            if hasattr(hot, name):
                setattr(hot, name, value)


def run(cases: Sequence[Case], idea: Idea) -> tuple[float, float, float, float]:
    """(ventana's answer rate, plain BM25's at its tokens, block tokens, search p50 µs)."""
    tok = default_tokenizer()
    n = ours = theirs = spent = 0
    searched: list[float] = []
    with constants(idea.constants):
        limit = int(rank.LIMIT)
        for c in cases:
            for question, answer in c.probes:
                started = time.perf_counter()
                query = search_terms(question) if idea.related else query_terms(question)
                if idea.expand is not None:
                    query = idea.expand(query, c.index)
                vector = dense.query_vector(question) if idea.dense else None
                search = RecallQuery(1, 1, query, c.before, limit, None, vector, question)
                hits = c.index.search(search)
                if idea.rerank is not None:
                    hits = idea.rerank(hits, c.index)
                searched.append(time.perf_counter() - started)
                block = render(hits, BUDGET, tok.count, c.language)
                picked = bm25_pick(c.older, question, block.tokens + c.summary, tok)
                n += 1
                ours += answer.lower() in block.text.lower()
                theirs += answer.lower() in " ".join(f"{u} {a}" for u, a in picked).lower()
                spent += block.tokens
    n = max(n, 1)
    return ours / n, theirs / n, spent / n, percentile(searched, 50) * 1e6


# -- the ideas not kept, as tried ---------------------------------------------------------


def next_after_question(hits: list[Hit], key: KeyIndex, top: int = 3) -> list[Hit]:
    """The exchange after each of the best hits whose reply asks something, right after it."""
    out, have = list(hits), {h.exchange.id for h in hits}
    for hit in hits[:top]:
        after = key.entries.get(hit.exchange.id + 1)
        if "?" in hit.exchange.reply_text and after and after.exchange.id not in have:
            out.insert(out.index(hit) + 1, Hit(after.exchange, hit.score * 0.9, ()))
            have.add(after.exchange.id)
    return out


def neighbours(hits: list[Hit], key: KeyIndex) -> list[Hit]:
    """The exchanges just before and after the best hit, right after it (a second pass)."""
    if not hits:
        return hits
    have, best = {h.exchange.id for h in hits}, hits[0]
    near = [key.entries.get(best.exchange.id + step) for step in (-1, 1)]
    extra = [
        Hit(c.exchange, best.score * 0.9, ()) for c in near if c and c.exchange.id not in have
    ]
    return [best, *extra, *hits[1:]]


def weighted(user: float = 0.0, recent: float = 0.0) -> Rerank:
    """Scores raised for matches on the user's side, or for newer exchanges."""

    def rerank(hits: list[Hit], key: KeyIndex) -> list[Hit]:
        newest = max(key.entries, default=1)
        out = []
        for h in hits:
            said = set(terms(h.exchange.user_text))
            share = sum(t in said for t in h.matched) / max(len(h.matched), 1)
            boost = (1 + user * share) * (1 + recent * h.exchange.id / newest)
            out.append(Hit(h.exchange, h.score * boost, h.matched))
        return sorted(out, key=lambda h: -h.score)

    return rerank


def siblings(query: tuple[QueryTerm, ...], key: KeyIndex) -> tuple[QueryTerm, ...]:
    """Each word's sibling stems in the key's vocabulary (same 4 first letters), at half
    weight: `studies` → `stud` also finds `studi`."""
    have, extra = {q.term for q in query}, []
    for q in query:
        if q.hard or len(q.term) < 4:
            continue
        for term in key.df:
            if term not in have and term[:4] == q.term[:4] and abs(len(term) - len(q.term)) <= 2:
                extra.append(QueryTerm(term, 0.5 * q.weight))
                have.add(term)
    return (*query, *extra)


OLD = {"MIN_SCORE": 3.0, "CANDIDATES": 20, "LIMIT": 8}
NO_DENSE = {"related": False, "dense": False}
IDEAS = (
    Idea("before (cut 3.0, 20 candidates, 8 hits)", OLD, **NO_DENSE),
    Idea("cut-off 1.5 only", {**OLD, "MIN_SCORE": 1.5}, **NO_DENSE),
    Idea("30 candidates, 20 hits only", {**OLD, "CANDIDATES": 30, "LIMIT": 20}, **NO_DENSE),
    Idea("both, no related words", **NO_DENSE),
    Idea("+ related words", dense=False),
    Idea("+ embedding, extra places (fused, recall11)", {"RERANK": False}),
    Idea("kept: + the learned choice (product, rerank1)"),
    Idea("  embedding's cut at 13 only (no fusion)", {"RERANK": False, "DENSE_TOP": 0}),
    Idea("  fusion only (cut at BM25's 20)", {"RERANK": False, "SHOWN": 20}),
    Idea("  nearest 10", {"RERANK": False, "DENSE_TOP": 10}),
    Idea("  nearest 40", {"RERANK": False, "DENSE_TOP": 40}),
    Idea("  embedding weight 0.5", {"RERANK": False, "DENSE_WEIGHT": 0.5}),
    Idea("  embedding weight 2", {"RERANK": False, "DENSE_WEIGHT": 2.0}),
    Idea("  cut at 10", {"RERANK": False, "SHOWN": 10}),
    Idea("  cut at 16", {"RERANK": False, "SHOWN": 16}),
    Idea("  no extra places (recall9)", {"RERANK": False, "EXTRA": 0}),
    Idea("  extra places even when the lists agree", {"RERANK": False, "AGREE": 0}),
    Idea("  extra places: 2", {"RERANK": False, "EXTRA": 2}),
    Idea("  extra places: 5", {"RERANK": False, "EXTRA": 5}),
    Idea("  user sides only (recall10)", {"RERANK": False, "REPLY_MARGIN": 1e9}),
    Idea("  a reply as near as a user side", {"RERANK": False, "REPLY_MARGIN": 0.0}),
    Idea("  reply margin 0.2", {"RERANK": False, "REPLY_MARGIN": 0.2}),
    Idea("+ no cut-offs, 60 candidates, 40 hits",
         {"MIN_SCORE": 0.0, "BEST_SHARE": 0.0, "CANDIDATES": 60, "LIMIT": 40}),
    Idea("+ common words searched (share 0.3)", {"COMMON_SHARE": 0.3}),
    Idea("+ next exchange after a question", rerank=next_after_question),
    Idea("+ neighbours of the best hit", rerank=neighbours),
    Idea("+ user side weighted ×2", rerank=weighted(user=1.0)),
    Idea("+ recency prior (+20 % newest)", rerank=weighted(recent=0.2)),
    Idea("+ sibling stems expanded", expand=siblings),
    Idea("+ k1 1.6", {"K1": 1.6}),
    Idea("+ k1 0.9", {"K1": 0.9}),
    Idea("+ b 0.5", {"B": 0.5}),
    Idea("+ b 0.9", {"B": 0.9}),
)  # fmt: skip


def turn_cost(cases: Sequence[Case], rounds: int = 3) -> dict[str, tuple[float, float]]:
    """What recall costs a turn, before, without the sentence embedding, and kept: each
    exchange's own user text searched as the next message would be (the exchanges before
    its window; the message embedded too when kept), the block rendered with a per-arm
    `Costs` cache, the arms interleaved. {arm: (p50 µs, hits shown)}; the exchange's own
    vector, computed when it is stored, is `embed_cost`'s."""
    tok = default_tokenizer()
    arms = {"before": OLD, "no embedding": {}, "fused": {"RERANK": False}, "kept": {}}
    spent: dict[str, list[float]] = {arm: [] for arm in arms}
    shown: dict[str, int] = dict.fromkeys(arms, 0)
    caches = {arm: Costs(tok.count) for arm in arms}
    for r in range(rounds):
        for c in cases:
            for n, entry in list(c.index.entries.items())[2 * WINDOW :]:
                order = list(arms) if (n + r) % 2 else list(arms)[::-1]
                for arm in order:
                    with constants(arms[arm]):
                        started = time.perf_counter()
                        text = entry.exchange.user_text
                        query = query_terms(text) if arm == "before" else search_terms(text)
                        meaning = arm in ("fused", "kept")
                        vector = dense.query_vector(text) if meaning else None
                        before = n - WINDOW + 1
                        search = RecallQuery(1, 1, query, before, int(rank.LIMIT), None, vector,
                                             text)  # fmt: skip
                        hits = c.index.search(search) if query else []
                        block = render(hits, BUDGET, caches[arm], c.language)
                        spent[arm].append(time.perf_counter() - started)
                        shown[arm] += len(block.hits)
    turns = max(len(spent["kept"]), 1)
    return {arm: (percentile(spent[arm], 50) * 1e6, shown[arm] / turns) for arm in arms}


def embed_cost(cases: Sequence[Case]) -> float:
    """p50 µs of one stored exchange's vectors (`dense.Vectors.add`: both sides)."""
    spent = []
    for c in cases:
        vectors = dense.Vectors()
        for n, entry in c.index.entries.items():
            started = time.perf_counter()
            vectors.add(n, entry.exchange.user_text, entry.exchange.reply_text)
            spent.append(time.perf_counter() - started)
    return percentile(spent, 50) * 1e6


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shuffles", type=int, default=3, help="orders of the train dialogues")
    parser.add_argument("--quick", action="store_true", help="one order, the first 7 ideas")
    args = parser.parse_args(argv)
    quiet_logs()
    sets = {
        "TIAGE train-built": tiage_train(1 if args.quick else args.shuffles),
        "TIAGE train, the bot's side": tiage_train(1 if args.quick else args.shuffles, True),
        "bench.recall cases (block only)": support_cases(120),
    }
    sizes = ", ".join(f"{name}: {sum(len(c.probes) for c in s)}" for name, s in sets.items())
    print(
        f"== recall ablation: answer in the block, ventana vs plain BM25 at its tokens ({sizes})"
    )
    print(f"  {'idea':<42}" + "".join(f"{name:>36}" for name in sets) + f"{'search p50':>12}")
    for idea in IDEAS[:7] if args.quick else IDEAS:
        cells, micros = [], 0.0
        for cases in sets.values():
            ours, theirs, spent, us = run(cases, idea)
            cells.append(f"{ours:.1%} vs {theirs:.1%} ({spent:,.0f} tok)")
            micros = max(micros, us)
        print(f"  {idea.name:<42}" + "".join(f"{c:>36}" for c in cells) + f"{micros:>10.0f}µs")
    print("  per-turn recall (query, in-memory search, block), every exchange's text as the next")
    print("  message, the arms interleaved:")
    for name, cases in (
        ("support cases", support_cases(300)),
        ("TIAGE", sets["TIAGE train-built"][:1]),
    ):
        cost = turn_cost(cases, 1 if args.quick else 3)
        cells = ", ".join(
            f"{arm} p50 {us:.0f} µs ({hits:.1f} shown)" for arm, (us, hits) in cost.items()
        )
        extra = cost["kept"][0] - cost["before"][0]
        embedding = cost["kept"][0] - cost["no embedding"][0]
        learned = cost["kept"][0] - cost["fused"][0]
        print(f"    {name:<14} {cells}: {extra:+.0f} µs a turn ({embedding:+.0f} the embedding, "
              f"{learned:+.0f} of it the learned choice)")  # fmt: skip
        print(f"    {'':<14} storing an exchange: its vectors p50 {embed_cost(cases):.0f} µs")


if __name__ == "__main__":
    main()
