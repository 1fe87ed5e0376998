"""Gradient-boosted trees for a topic head: scikit-learn fits, the product scores.

`fit_boosted` fits scikit-learn's `HistGradientBoostingClassifier` on the trainer's rows
and keeps only its trees, as `memory.topic.model.BoostedModel` reads them, so the CV
replays score rows with the product's own code. Depth 3 and `SHRINK` (trees × learning
rate) are `python -m bench.topic_model.candidates`' gradient boosting (150 trees at 0.05);
the trainer's grid picks the number of trees (`TREES_GRID`) by CV.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memory.topic.features import FEATURES
from memory.topic.model import BoostedModel
from memory.trees import Node

TREES_GRID = (50, 150)
DEPTH = 3
SHRINK = 7.5  # trees × learning rate: 150 trees at 0.05, 50 at 0.15
L2 = 1.0


class Boosted:
    """A fitted head: the product's `BoostedModel`, each row's probability memoised (the
    CV replays ask for the same rows at every threshold)."""

    def __init__(self, model: BoostedModel) -> None:
        self.model = model
        self._memo: dict[tuple[float, ...], float] = {}

    def probability(self, x: Any) -> float:
        key = tuple(x)
        p = self._memo.get(key)
        if p is None:
            p = self._memo[key] = self.model.probability(key)
        return p


def fit_boosted(x: Any, y: Any, w: Any, trees: int) -> Boosted:
    """`trees` trees of depth `DEPTH` fitted on rows `x`, labels `y`, row weights `w`."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    clf = HistGradientBoostingClassifier(
        max_iter=trees, learning_rate=SHRINK / trees, max_depth=DEPTH, l2_regularization=L2,
        early_stopping=False, random_state=0,
    )  # fmt: skip
    clf.fit(x, y.astype(int), sample_weight=w)
    means = tuple(float(v) for v in (x * w[:, None]).sum(0) / w.sum())
    return Boosted(from_sklearn(clf, means))


def from_sklearn(
    clf: Any, means: Sequence[float], names: Sequence[str] = FEATURES
) -> BoostedModel:
    """A fitted binary `HistGradientBoostingClassifier`'s trees as the product reads them
    (scikit-learn's own layout: each node's value, split feature and real threshold)."""
    trees = tuple(_nodes(pred.nodes) for (pred,) in clf._predictors)
    base = float(np.ravel(clf._baseline_prediction)[0])
    return BoostedModel("fit", tuple(names), tuple(means), trees, base, 0.5)


def _nodes(nodes: Any) -> tuple[Node, ...]:
    out = []
    for n in nodes:
        if n["is_leaf"]:
            out.append((-1, 0.0, 0, 0, float(n["value"])))
        else:
            out.append((int(n["feature_idx"]), float(n["num_threshold"]), int(n["left"]),
                        int(n["right"]), float(n["value"])))  # fmt: skip
    return tuple(out)


def as_json(model: BoostedModel) -> dict[str, object]:
    """The head's fields of the model file, values rounded to 6 decimals (50 trees: about
    20 KB; the file, not the fitted trees, is what `bench.topic_tiage` scores). Thresholds
    are written as fitted: for a feature with more distinct values than bins, scikit-learn
    puts thresholds on values training rows take, and a rounded one sends those rows down
    the other branch. The shipped chat head was written rounded; two of its thresholds
    sit within 1e-6 of a simple fraction (`question_novelty` 0.366667 and 0.535714), where
    a row may go the other way than in the fit; `--only chat` would write them exact."""
    return {
        "kind": "gradient_boosting",
        "means": [round(v, 6) for v in model.means],
        "base": round(model.base, 6),
        "trees": [[[f, t, a, b, round(v, 6)] for f, t, a, b, v in nodes] for nodes in model.trees],
    }
