"""Fit the opening model (`memory.topic.opening`): L2 logistic regression, numpy only.

Rows are the user messages of the support training sessions, each labelled by whether it
opens a case (a session's first message, every gold reset) or goes on with one. Classes
are weighted to equal shares (openings are about a quarter of the messages). Terms seen
in fewer than `MIN_DF` messages are left out, and weights under `KEEP` are not written:
the file stays a few KB.

The trainer (`bench.topic_model.train`) fits one opening model per cross-validation fold
on the other folds' sessions, so the topic model is fitted and scored on out-of-fold
opening values (stacking), and the shipped one on every training session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from memory.topic.opening import OpeningModel, opening_terms

VERSION = "opening-v2"
MIN_DF = 2
L2 = 1.0
STEPS = 400
RATE = 2.0
KEEP = 0.01


def fit_opening(texts: Sequence[str], opens: Sequence[bool], l2: float = L2) -> OpeningModel:
    """The model of `texts` labelled `opens`; a constant one when a class is missing."""
    rows = [opening_terms(t) for t in texts]
    y = np.array(opens, dtype=float)
    if len(rows) == 0 or y.min() == y.max():
        return OpeningModel(VERSION, {}, 0.0)
    df = Counter(t for row in rows for t in row)
    vocab = sorted(t for t, n in df.items() if n >= MIN_DF)
    column = {t: j for j, t in enumerate(vocab)}
    x = np.zeros((len(rows), len(vocab)))
    for i, row in enumerate(rows):
        for t in row:
            if t in column:
                x[i, column[t]] = 1.0
    share = y.mean()
    weight = np.where(y == 1, 0.5 / share, 0.5 / (1 - share)) / len(y)
    w, b = np.zeros(len(vocab)), 0.0
    for _ in range(STEPS):  # gradient descent: convex, deterministic, a few hundred columns
        p = 1 / (1 + np.exp(-(x @ w + b)))
        err = weight * (p - y)
        w -= RATE * (x.T @ err + l2 * w / len(y))
        b -= RATE * float(err.sum())
    kept = {t: round(float(v), 4) for t, v in zip(vocab, w, strict=True) if abs(v) >= KEEP}
    return OpeningModel(VERSION, kept, round(b, 4))


def as_json(model: OpeningModel, trained_on: str) -> dict[str, object]:
    return {
        "version": model.version,
        "kind": "logistic_regression over opening_terms (memory.topic.opening)",
        "trained_on": trained_on,
        "bias": model.bias,
        "weights": dict(sorted(model.weights.items())),
    }
