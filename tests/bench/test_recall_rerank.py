"""`bench.recall.rerank`: the trainer sees the pool the product searches, and the file it
writes scores as scikit-learn's fitted trees do."""

from __future__ import annotations

import numpy as np
import pytest

from bench.recall import rerank as trainer
from bench.recall.ablation import support_cases
from memory.recall import rerank


def test_the_written_model_scores_as_scikit_learn_fitted_it() -> None:
    """Rows labelled by a rule of two features: the product's walk of the fitted trees,
    and of the file as written (rounded to 6 decimals), give scikit-learn's logits."""
    ensemble = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 1.0, (600, len(rerank.FEATURES)))
    y = (x[:, 0] + x[:, 6] > 1.0) ^ (rng.uniform(size=600) < 0.1)
    probes = [
        trainer.Probe(f"g{n}", "user", None, None, [], [], list(range(60)),  # type: ignore[arg-type]
                      x[n * 60 : (n + 1) * 60], y[n * 60 : (n + 1) * 60])
        for n in range(10)
    ]  # fmt: skip
    model = trainer.fit(probes, 40)
    clf = ensemble.HistGradientBoostingClassifier(
        max_iter=40, learning_rate=trainer.SHRINK / 40, max_depth=trainer.DEPTH,
        l2_regularization=trainer.L2, early_stopping=False, random_state=0,
    ).fit(x, y.astype(int))  # fmt: skip
    assert model.logits(x) == pytest.approx(clf.decision_function(x), abs=1e-9)
    written = rerank.parse(trainer.as_json(model, {"user": (10, 5, 6)}))
    assert written.logits(x) == pytest.approx(clf.decision_function(x), abs=1e-4)


def test_a_probe_is_searched_as_the_product_searches_it() -> None:
    """On `bench.recall`'s English case, the trainer's pool and the shipped model choose
    what the search in memory returns, and the labels mark the answer's exchange."""
    english = [c for c in support_cases(120) if c.language == "en"]
    probes = [
        p
        for case in english
        for question, answer in case.probes
        if (p := trainer._probe("en", "support", case, question, answer)) is not None
    ]
    assert len(probes) >= 10
    for p in probes:
        searched = [h.exchange.id for h in p.case.index.search(p.query)]
        shown = rerank.choose(p.hits, p.nearest, p.case.index.entries, p.case.index.vectors,
                              p.query, 13)  # fmt: skip
        assert [h.exchange.id for h in shown] == searched
        assert trainer.found(p, rerank.load()) == any(p.labels[p.ids.index(i)] for i in searched)
    assert sum(p.labels.any() for p in probes) >= len(probes) // 2


def test_the_fewest_trees_within_the_tolerance_win() -> None:
    """The grid's choice: the fewest trees whose pooled CV is within `TOLERANCE` of the
    best, pooled over every set's probes."""
    near = {"user": (600, 480, 520), "bot": (400, 320, 332)}  # 852 of 1000
    best = {"user": (600, 480, 522), "bot": (400, 320, 333)}  # 855 of 1000
    assert trainer.pooled(near) == 0.852
    assert trainer.chosen({50: near, 100: best}) == 50
    assert trainer.chosen({50: {"user": (1000, 800, 840)}, 100: best}) == 100
