"""`bench.recall.rerank`: the trainer sees the pool the product searches, and the file it
writes scores as scikit-learn's fitted trees do."""

from __future__ import annotations

import numpy as np
import pytest

from bench.data.public_dialogues import build
from bench.recall import rerank as trainer
from bench.recall.ablation import support_cases
from memory.recall import rerank
from memory.recall.port import RecallQuery


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
    document = trainer.as_json(trainer.fit(probes, 40, 0.02), {"user": (10, 6, 70)},
                               {"user": (10, 5, 80)})  # fmt: skip
    written = rerank.parse(document)
    assert written.logits(x) == pytest.approx(clf.decision_function(x), abs=1e-4)
    assert written.show_at == 0.02
    assert document["cv"] == {"user": {"probes": 10, "fusion": 5, "fusion_shown": 80,
                                       "model": 6, "model_shown": 70}}  # fmt: skip


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
    near = {"user": (600, 520, 6000), "bot": (400, 332, 4000)}  # 852 of 1000
    best = {"user": (600, 522, 6000), "bot": (400, 333, 4000)}  # 855 of 1000
    assert trainer.pooled(near) == 0.852
    assert trainer.chosen({50: near, 100: best}) == 50
    assert trainer.chosen({50: {"user": (1000, 840, 9000)}, 100: best}) == 100


def _scored(logits: list[float], answer: int) -> trainer.Probe:
    query = RecallQuery(1, 1, ("x",), None, 20, None, None, "x")
    labels = np.arange(len(logits)) == answer
    return trainer.Probe("g", "user", None, query, [object()], [], list(range(len(logits))),  # type: ignore[arg-type]
                         None, labels)  # fmt: skip


def test_show_at_shows_the_most_answers_within_the_fusions_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each chance of the grid shows the candidates at or above it (one at least): the one
    picked shows the answer most often at no more exchanges a probe than allowed, the
    fewer shown on a tie, the last one when none fits."""
    monkeypatch.setattr(trainer, "SHOW_AT_GRID", (0.01, 0.1, 0.5))  # logits -4.6, -2.2, 0
    probes = [_scored([2.0, 1.0, -3.0, -9.0], 0), _scored([-1.0, -2.0, -4.0, -9.0], 2)]
    logits = [np.array([2.0, 1.0, -3.0, -9.0]), np.array([-1.0, -2.0, -4.0, -9.0])]
    assert trainer.tally(probes, logits, 0.01) == {"user": (2, 2, 6)}
    assert trainer.tally(probes, logits, 0.1) == {"user": (2, 1, 4)}
    assert trainer.tally(probes, logits, 0.5) == {"user": (2, 1, 3)}  # the second: one
    assert trainer.pick_show_at(probes, logits, 3.0) == 0.01
    assert trainer.pick_show_at(probes, logits, 2.5) == 0.5  # one answer either way
    assert trainer.pick_show_at(probes, logits, 1.0) == 0.5


def test_folds_group_the_probes_of_one_dialogue_across_orders_and_speakers() -> None:
    """A dialogue sits in a conversation of each order and of each speaker as the user:
    its exchanges name it alike in all of them (by its second utterance), so a fold holds
    the whole dialogue out and never scores a probe whose answer it trained on."""
    first, second = [f"a{n}" for n in range(6)], [f"b{n}" for n in range(6)]
    mine = build("train-0-0-0", [first, second], 1)  # the first speaker as the user
    theirs = build("train-1-1-3", [second[1:], first[1:]], 2)  # the other, another order
    names = {trainer.dialogue(mine, n) for n in range(3)}
    assert names == {trainer.dialogue(theirs, n) for n in range(2, 4)} == {"a1"}
    assert {trainer.dialogue(mine, n) for n in range(3, 6)} == {"b1"}
    assert trainer.dialogue(theirs, 0) == "b1"
