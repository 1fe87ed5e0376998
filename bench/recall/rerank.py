"""Fit the recall re-ranker (`memory.recall.rerank`) and write its model file.

    python -m bench.recall.rerank [--shuffles 3] [--check] [--out PATH]

Rows: every probe of `bench.recall.ablation`'s three sets (TIAGE train-built conversations
asked about the user's disclosures and about the other speaker's, and `bench.recall`'s two
support cases; never TIAGE's dev split, which `bench.recall.public` scores), searched as
the product searches (`memory.recall.hot.KeyIndex`: BM25's hits and the `DENSE_TOP`
nearest), each candidate described by `rerank.features` and labelled by whether its
exchange (its date line, as the block shows it, and both sides) holds the probe's answer.

Gradient-boosted trees (scikit-learn's `HistGradientBoostingClassifier`, depth 3) are
fitted on every row and written as `memory.recall.rerank` reads them. Before that, a
grouped 5-fold CV (whole conversations held out) prints, per set and for each number of
trees in `TREES_GRID`, how often the answer is among the exchanges shown, chosen by the
fold's model against the reciprocal-rank fusion it replaces, the same number of them;
the fewest trees within `TOLERANCE` of the best pooled figure are fitted. `--check`
fits and prints without writing.
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
from bench.recall.ablation import Case, support_cases, tiage_train
from bench.topic_model.boost import from_sklearn
from memory.recall import dense, rank
from memory.recall.dense import SHOWN, fuse
from memory.recall.port import RecallQuery
from memory.recall.related import search_terms
from memory.recall.rerank import FEATURES, MODEL_FILE, Reranker, choose, features

OUT = Path(__file__).resolve().parents[2] / "memory" / "recall" / "models" / MODEL_FILE
VERSION = "rerank-v1"
# The grid: the number of trees, at a learning rate of `SHRINK` ÷ trees; the fewest trees
# whose pooled CV is within `TOLERANCE` of the best win (each tree is CPU every search).
# Measured: 50 trees 86.0 / 83.2 % (user / bot), 100 trees 85.1 / 84.3 %: 50 shipped.
TREES_GRID = (50, 100)
SHRINK = 10.0
TOLERANCE = 0.005
DEPTH = 3
L2 = 1.0
FOLDS = 5


@dataclass(frozen=True, slots=True)
class Probe:
    group: str  # the conversation: folds hold out whole ones
    kind: str  # the set: "user", "bot", "support"
    case: Case
    query: RecallQuery
    hits: list[Any]
    nearest: list[tuple[int, bool]]
    ids: list[int]
    rows: Any
    labels: Any  # per candidate: its exchange holds the answer


def probes(shuffles: int) -> list[Probe]:
    sets = {"user": tiage_train(shuffles), "bot": tiage_train(shuffles, True),
            "support": support_cases(120)}  # fmt: skip
    out = []
    for kind, cases in sets.items():
        for n, case in enumerate(cases):
            for question, answer in case.probes:
                probe = _probe(f"{kind}-{n}", kind, case, question, answer)
                if probe is not None:
                    out.append(probe)
    return out


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


def fit(rows: Sequence[Probe], trees: int = TREES_GRID[0]) -> Reranker:
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.vstack([p.rows for p in rows])
    y = np.concatenate([p.labels for p in rows]).astype(int)
    clf = HistGradientBoostingClassifier(
        max_iter=trees, learning_rate=SHRINK / trees, max_depth=DEPTH, l2_regularization=L2,
        early_stopping=False, random_state=0,
    )  # fmt: skip
    clf.fit(x, y)
    model = from_sklearn(clf, [0.0] * len(FEATURES), FEATURES)
    return Reranker(VERSION, FEATURES, model.base, model.trees)


def found(probe: Probe, model: Reranker | None) -> bool:
    """Whether the answer is among the exchanges shown: chosen by `model`, or fused."""
    key, limit = probe.case.index, min(probe.query.limit, SHOWN)
    if model is None:
        by_reply = frozenset(i for i, reply in probe.nearest if reply)
        near = [i for i, _ in probe.nearest]
        hits = fuse(probe.hits, near, key.entries, limit, by_reply)
    else:
        hits = choose(probe.hits, probe.nearest, key.entries, key.vectors, probe.query, limit,
                      model)  # fmt: skip
    where = {i: n for n, i in enumerate(probe.ids)}
    return any(probe.labels[where[h.exchange.id]] for h in hits)


def cross_validate(
    rows: Sequence[Probe], trees: int = TREES_GRID[0]
) -> dict[str, tuple[int, int, int]]:
    """Per set: (probes, answers shown by the fusion, by the fold's model)."""
    groups = sorted({p.group for p in rows})
    random.Random(3).shuffle(groups)
    fold = {g: n % FOLDS for n, g in enumerate(groups)}
    out: dict[str, list[int]] = {}
    for f in range(FOLDS):
        model = fit([p for p in rows if fold[p.group] != f], trees)
        for p in rows:
            if fold[p.group] == f:
                tally = out.setdefault(p.kind, [0, 0, 0])
                tally[0] += 1
                tally[1] += found(p, None)
                tally[2] += found(p, model)
    return {kind: (n, a, b) for kind, (n, a, b) in out.items()}


def pooled(cv: dict[str, tuple[int, int, int]]) -> float:
    """The model's answers over every probe of every set."""
    return sum(b for _, _, b in cv.values()) / max(sum(n for n, _, _ in cv.values()), 1)


def chosen(runs: dict[int, dict[str, tuple[int, int, int]]]) -> int:
    """The fewest trees whose pooled CV is within `TOLERANCE` of the best."""
    best = max(pooled(cv) for cv in runs.values())
    return min(trees for trees, cv in runs.items() if pooled(cv) >= best - TOLERANCE)


def as_json(model: Reranker, cv: dict[str, tuple[int, int, int]]) -> dict[str, object]:
    return {
        "version": model.version,
        "trained_on": "TIAGE train-built conversations (both speakers) and bench.recall's "
        "support cases; `python -m bench.recall.rerank`",
        "cv": {kind: {"probes": n, "fusion": a, "model": b} for kind, (n, a, b) in cv.items()},
        "features": list(model.features),
        "base": round(model.base, 6),
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
    print(f"  grouped {FOLDS}-fold CV, answer among the exchanges shown (same number each):")
    runs = {trees: cross_validate(rows, trees) for trees in TREES_GRID}
    for trees, cv in runs.items():
        for kind, (n, fused, learned) in cv.items():
            print(f"    {trees:>3} trees  {kind:<8} ({n:>3})  fusion {fused / n:6.1%}   "
                  f"model {learned / n:6.1%}")  # fmt: skip
    trees = chosen(runs)
    cv = runs[trees]
    print(f"  chosen: {trees} trees (the fewest within {TOLERANCE:.1%} of the best, pooled)")
    model = fit(rows, trees)
    if args.check:
        return
    args.out.write_text(json.dumps(as_json(model, cv), separators=(",", ":")) + "\n")
    print(
        f"  wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB, {len(model.trees)} trees)"
    )


if __name__ == "__main__":
    main()
