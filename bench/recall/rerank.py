"""Fit the recall re-ranker (`memory.recall.rerank`) and write its model file.

    python -m bench.recall.rerank [--shuffles 3] [--check] [--out PATH]

Rows: every probe of `bench.recall.ablation`'s three sets (TIAGE train-built conversations
asked about the user's disclosures and about the other speaker's, and `bench.recall`'s two
support cases; never TIAGE's dev split, which `bench.recall.public` scores), searched as
the product searches (`memory.recall.hot.KeyIndex`: BM25's hits and the `DENSE_TOP`
nearest), each candidate described by `rerank.features` and labelled by whether its
exchange (its date line, as the block shows it, and both sides) holds the probe's answer.

Gradient-boosted trees (scikit-learn's `HistGradientBoostingClassifier`, depth 3) are
fitted on every row and written as `memory.recall.rerank` reads them, with `show_at`: the
chance from which a candidate is shown. Before that, a grouped 5-fold CV (each TIAGE
dialogue held out whole: it sits in a conversation of every order and of each speaker)
prints, per set, how often the answer is among the exchanges shown and how many are
shown a probe: by the reciprocal-rank fusion the model replaced, then for each number of
trees in `TREES_GRID` by the fold's model at the `SHOW_AT_GRID` chance that shows the
answer most often at no more exchanges a probe than the fusion. The fewest trees within
`TOLERANCE` of the best pooled figure are fitted. `--check` fits and prints without
writing.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import quiet_logs
from bench.data.public_dialogues import Conversation, conversations
from bench.recall.ablation import Case, index, support_cases
from bench.topic_model.boost import from_sklearn
from memory.recall import dense, rank
from memory.recall.dense import SHOWN, fuse
from memory.recall.port import RecallQuery
from memory.recall.related import search_terms
from memory.recall.rerank import (
    FEATURES,
    MODEL_FILE,
    Reranker,
    choose,
    cut_of,
    features,
    shown,
)

OUT = Path(__file__).resolve().parents[2] / "memory" / "recall" / "models" / MODEL_FILE
VERSION = "rerank-v1"
# The grid: the number of trees, at a learning rate of `SHRINK` ÷ trees; the fewest trees
# whose pooled CV is within `TOLERANCE` of the best win (each tree is CPU every search).
# Measured: 50 trees 86.0 / 85.5 % (user / bot), 100 trees 85.3 / 86.6 %: 50 shipped.
TREES_GRID = (50, 100)
SHRINK = 10.0
TOLERANCE = 0.005
DEPTH = 3
L2 = 1.0
FOLDS = 5
# a candidate is shown from this chance on: the grid the trainer picks `show_at` from
SHOW_AT_GRID = tuple(n / 1000 for n in range(5, 41))


Tally = tuple[int, int, int]  # (probes, answers shown, exchanges shown)


@dataclass(frozen=True, slots=True)
class Probe:
    group: str  # the TIAGE dialogue (or support case): folds hold out whole ones
    kind: str  # the set: "user", "bot", "support"
    case: Case
    query: RecallQuery
    hits: list[Any]
    nearest: list[tuple[int, bool]]
    ids: list[int]
    rows: Any
    labels: Any  # per candidate: its exchange holds the answer


def probes(shuffles: int) -> list[Probe]:
    """Every probe of the three sets, grouped by the TIAGE dialogue its answer was said in
    (the same dialogue sits in a conversation of each order and of each speaker: a fold
    holds out the dialogue, not one conversation of it), or by support case."""
    out = []
    for kind in ("user", "bot"):
        for conv in conversations("train", shuffles=shuffles):
            asked = conv.bot_probes if kind == "bot" else conv.probes
            case = index("en", conv.exchanges, [(p.question, p.answer) for p in asked])
            for p in asked:
                probe = _probe(dialogue(conv, p.exchange), kind, case, p.question, p.answer)
                if probe is not None:
                    out.append(probe)
    for n, case in enumerate(support_cases(120)):
        for question, answer in case.probes:
            probe = _probe(f"support-{n}", "support", case, question, answer)
            if probe is not None:
                out.append(probe)
    return out


def dialogue(conv: Conversation, n: int) -> str:
    """The TIAGE dialogue exchange `n` of `conv` belongs to, by its second utterance:
    each dialogue is a day of its conversation, and its first exchange is that utterance
    and the next when the dialogue's second speaker is the user (a name's third field is
    the side: `train-0-1-4`), or the first utterance and that one otherwise."""
    side = int(conv.name.split("-")[2])
    day = conv.exchanges[n][2].date()
    first = next(x for x in conv.exchanges if x[2].date() == day)
    return first[1 - side]


def _probe(group: str, kind: str, case: Case, question: str, answer: str) -> Probe | None:
    """One probe as the product searches it; None when it is not searched by meaning
    (no query term or no vector: BM25 alone serves it, the model never sees it)."""
    terms, vector = search_terms(question), dense.query_vector(question)
    if not terms or vector is None:
        return None
    key = case.index
    bm25 = RecallQuery(1, 1, terms, case.before, int(rank.LIMIT), None, None, question)
    query = RecallQuery(1, 1, terms, case.before, int(rank.LIMIT), None, vector, question)
    hits = key.search(bm25)
    nearest = key.vectors.nearest_sides(vector, case.before)
    ids, rows = features(hits, nearest, key.vectors, query)
    said = answer.lower()
    labels = np.array([said in _shown(key.entries[i].exchange) for i in ids], bool)
    return Probe(group, kind, case, query, hits, nearest, ids, rows, labels)


def _shown(exchange: Any) -> str:
    day = exchange.created_at.date().isoformat() if exchange.created_at else "?"
    return f"[{day}] {exchange.user_text}\n{exchange.reply_text}".lower()


def fit(rows: Sequence[Probe], trees: int = TREES_GRID[0], show_at: float = 0.0) -> Reranker:
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.vstack([p.rows for p in rows])
    y = np.concatenate([p.labels for p in rows]).astype(int)
    clf = HistGradientBoostingClassifier(
        max_iter=trees, learning_rate=SHRINK / trees, max_depth=DEPTH, l2_regularization=L2,
        early_stopping=False, random_state=0,
    )  # fmt: skip
    clf.fit(x, y)
    model = from_sklearn(clf, [0.0] * len(FEATURES), FEATURES)
    return Reranker(VERSION, FEATURES, model.base, model.trees, show_at)


def found(probe: Probe, model: Reranker | None) -> bool:
    """Whether the answer is among the exchanges shown: chosen by `model`, or fused."""
    return _answered(probe, _chosen(probe, model))


def _answered(probe: Probe, hits: Sequence[Any]) -> bool:
    return any(probe.labels[probe.ids.index(h.exchange.id)] for h in hits)


def _chosen(probe: Probe, model: Reranker | None) -> list[Any]:
    key, limit = probe.case.index, min(probe.query.limit, SHOWN)
    if model is not None:
        return choose(probe.hits, probe.nearest, key.entries, key.vectors, probe.query, limit,
                      model)  # fmt: skip
    by_reply = frozenset(i for i, reply in probe.nearest if reply)
    return fuse(probe.hits, [i for i, _ in probe.nearest], key.entries, limit, by_reply)


def fusion(rows: Sequence[Probe]) -> dict[str, Tally]:
    """Per set: the reciprocal-rank fusion's (probes, answers shown, exchanges shown)."""
    out: dict[str, list[int]] = {}
    for p in rows:
        hits = _chosen(p, None)
        tally = out.setdefault(p.kind, [0, 0, 0])
        tally[0] += 1
        tally[1] += _answered(p, hits)
        tally[2] += len(hits)
    return {kind: (n, a, s) for kind, (n, a, s) in out.items()}


def out_of_fold(rows: Sequence[Probe], trees: int = TREES_GRID[0]) -> list[Any]:
    """Each probe's candidates' logits by the model of the grouped fold that held it out."""
    groups = sorted({p.group for p in rows})
    random.Random(3).shuffle(groups)
    fold = {g: n % FOLDS for n, g in enumerate(groups)}
    logits: list[Any] = [None] * len(rows)
    for f in range(FOLDS):
        model = fit([p for p in rows if fold[p.group] != f], trees)
        for n, p in enumerate(rows):
            if fold[p.group] == f:
                logits[n] = model.logits(p.rows)
    return logits


def tally(rows: Sequence[Probe], logits: Sequence[Any], show_at: float) -> dict[str, Tally]:
    """Per set, as the product would show them at `show_at` (`rerank.shown`): (probes,
    answers shown, exchanges shown)."""
    cut = cut_of(show_at)
    out: dict[str, list[int]] = {}
    for p, scores in zip(rows, logits, strict=True):
        count = shown(scores, cut, min(p.query.limit, SHOWN)) if p.hits else 0
        order = np.argsort(-scores, kind="stable")[:count]
        tally = out.setdefault(p.kind, [0, 0, 0])
        tally[0] += 1
        tally[1] += bool(p.labels[order].any())
        tally[2] += len(order)
    return {kind: (n, a, s) for kind, (n, a, s) in out.items()}


def pick_show_at(rows: Sequence[Probe], logits: Sequence[Any], most: float) -> float:
    """The `SHOW_AT_GRID` chance that shows the answer most often while showing at most
    `most` exchanges a probe on average (the fewest shown on a tie)."""
    best: tuple[int, float, float] | None = None
    for show_at in SHOW_AT_GRID:
        per = tally(rows, logits, show_at).values()
        answers, count = sum(a for _, a, _ in per), sum(s for _, _, s in per) / len(rows)
        if count <= most and (best is None or (answers, -count) > best[:2]):
            best = (answers, -count, show_at)
    if best is None:
        return SHOW_AT_GRID[-1]
    return best[2]


def pooled(cv: dict[str, Tally]) -> float:
    """The answers shown over every probe of every set."""
    return sum(a for _, a, _ in cv.values()) / max(sum(n for n, _, _ in cv.values()), 1)


def chosen(runs: dict[int, dict[str, Tally]]) -> int:
    """The fewest trees whose pooled CV is within `TOLERANCE` of the best."""
    best = max(pooled(cv) for cv in runs.values())
    return min(trees for trees, cv in runs.items() if pooled(cv) >= best - TOLERANCE)


def as_json(model: Reranker, cv: dict[str, Tally], fused: dict[str, Tally]) -> dict[str, object]:
    return {
        "version": model.version,
        "trained_on": "TIAGE train-built conversations (both speakers) and bench.recall's "
        "support cases; `python -m bench.recall.rerank`",
        "cv": {
            kind: {
                "probes": n,
                "fusion": fused[kind][1],
                "fusion_shown": fused[kind][2],
                "model": answers,
                "model_shown": count,
            }
            for kind, (n, answers, count) in cv.items()
        },
        "features": list(model.features),
        "base": round(model.base, 6),
        "show_at": model.show_at,
        # thresholds as fitted: scikit-learn puts some exactly on a value rows take (a
        # rank's 1/3), and a rounded one would send those rows down the other branch
        "trees": [[[f, t, a, b, round(v, 6)] for f, t, a, b, v in nodes] for nodes in model.trees],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shuffles", type=int, default=3, help="orders of the train dialogues")
    parser.add_argument("--check", action="store_true", help="fit and print, write nothing")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    quiet_logs()
    rows = probes(args.shuffles)
    candidates = sum(len(p.ids) for p in rows)
    print(f"== recall re-ranker: {len(rows)} probes searched by meaning, {candidates} candidates")
    print(f"  grouped {FOLDS}-fold CV (by dialogue), answer among the exchanges shown:")
    fused = fusion(rows)
    most = sum(s for _, _, s in fused.values()) / len(rows)
    _print("fusion", fused)
    runs, picked = {}, {}
    for trees in TREES_GRID:
        logits = out_of_fold(rows, trees)
        picked[trees] = pick_show_at(rows, logits, most)
        runs[trees] = tally(rows, logits, picked[trees])
        _print(f"{trees} trees, shown from {picked[trees]:.1%}", runs[trees])
    trees = chosen(runs)
    print(f"  chosen: {trees} trees (the fewest within {TOLERANCE:.1%} of the best, pooled), "
          f"shown from a {picked[trees]:.1%} chance (the most answers at ≤ {most:.2f} "
          "exchanges a probe, the fusion's)")  # fmt: skip
    model = fit(rows, trees, picked[trees])
    if args.check:
        return
    document = json.dumps(as_json(model, runs[trees], fused), separators=(",", ":"))
    args.out.write_text(document + "\n")
    print(
        f"  wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB, {len(model.trees)} trees)"
    )


def _print(arm: str, cv: dict[str, Tally]) -> None:
    sets = "   ".join(f"{kind} {a / n:6.1%}" for kind, (n, a, _) in cv.items())
    count = sum(s for _, _, s in cv.values()) / max(sum(n for n, _, _ in cv.values()), 1)
    print(f"    {arm:<32} {sets}   pooled {pooled(cv):6.1%}   {count:5.2f} shown a probe")


if __name__ == "__main__":
    main()
