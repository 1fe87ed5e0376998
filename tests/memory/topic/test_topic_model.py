"""The learned topic model: its shipped file, its arithmetic (the regression's and the
boosted trees'), its decisions, its trainer."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest

from memory.topic.decide import TopicContext, detect_heuristic, detect_learned
from memory.topic.features import FEATURES, extract
from memory.topic.model import (
    MODEL_FILE,
    BoostedModel,
    ModelFileError,
    TopicModel,
    load_model,
    load_models,
    parse_model,
    sigmoid,
)
from memory.types import Exchange

NOW = datetime(2026, 7, 17, 10, tzinfo=UTC)


def _raw() -> dict[str, object]:
    path = resources.files("memory.topic").joinpath("models").joinpath(MODEL_FILE)
    raw: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return raw


def _ctx(message: str, *window: tuple[str, str]) -> TopicContext:
    exchanges = tuple(Exchange(j, 1, u, r) for j, (u, r) in enumerate(window))
    return TopicContext(message, exchanges, "", NOW, NOW, 0, 0, "en")


def test_shipped_model_loads_and_matches_the_features() -> None:
    """The packaged JSON names exactly FEATURES, in order, with a head for each profile."""
    heads = load_models()
    assert set(heads) == {"support", "chat"}
    for model in heads.values():
        assert model.features == FEATURES
        assert len(model.means) == len(FEATURES)
        assert 0 < model.threshold < 1
    support = heads["support"]
    assert isinstance(support, TopicModel)
    assert len(support.weights) == len(support.scales) == len(FEATURES)
    raw = _raw()
    assert raw["version"] == support.version
    assert {"training_data", "cv", "trained", "profiles"} <= set(raw)
    profiles = raw["profiles"]
    assert isinstance(profiles, dict)
    assert len(json.dumps(profiles["support"])) < 8_000  # a few KB
    assert len(json.dumps(raw)) < 40_000  # the chat head's trees too


def test_a_model_for_other_features_is_refused_with_the_names() -> None:
    """A file whose feature list differs fails loudly, naming what is missing."""
    raw = _raw()
    features = list(FEATURES)
    raw["features"] = [*features[1:], "made_up"]
    with pytest.raises(ModelFileError, match=r"made_up.*|.*log_terms"):
        parse_model(raw)
    with pytest.raises(ModelFileError, match="malformed"):
        parse_model({k: v for k, v in _raw().items() if k != "profiles"})


def test_probability_is_the_logistic_of_the_standardised_dot_product() -> None:
    """Inference equals a hand computation on a fixed vector."""
    model = TopicModel("t", ("a", "b"), (1.0, 0.0), (2.0, 0.5), (0.8, -1.5), 0.25, 0.5)
    x = (3.0, 1.0)
    z = 0.25 + 0.8 * (3.0 - 1.0) / 2.0 - 1.5 * (1.0 - 0.0) / 0.5
    assert model.logit(x) == pytest.approx(z)
    assert model.probability(x) == pytest.approx(1 / (1 + math.exp(-z)))
    shipped = load_model()
    ones = tuple(1.0 for _ in FEATURES)
    expected = shipped.bias + sum(
        w * (1.0 - m) / s
        for w, m, s in zip(shipped.weights, shipped.means, shipped.scales, strict=True)
    )
    assert shipped.logit(ones) == pytest.approx(expected)


CASE = (
    (
        "Hello, my order #A-5521 arrived damaged on July 14.",
        "Sorry to hear that. I see order #A-5521; can you describe the damage?",
    ),
    (
        "The box was crushed and the lamp base is cracked.",
        "Thanks. I can offer a replacement or a refund of $84.90. Which do you prefer?",
    ),
)


def test_closure_then_a_new_request_resets_and_a_follow_up_continues() -> None:
    """Support profile: 'that's all, thanks' then another problem resets; a follow-up on
    the order continues."""
    closed = (*CASE, ("A replacement, that's all, thanks!", "Done, glad to help. Bye!"))
    fresh = "I have a problem with my invoice: I was charged twice for the June subscription."
    decision = detect_heuristic(_ctx(fresh, *closed))
    assert decision.reset, decision.signals
    assert decision.reason in {"case_closed", "intent_changed", "new_subject"}
    follow_up = detect_heuristic(_ctx("A replacement, please. Will #A-5521 ship soon?", *CASE))
    assert follow_up.action == "continue", follow_up.signals


def test_below_the_threshold_continues_and_at_it_resets() -> None:
    """Whatever the features, a probability under the profile's threshold never resets."""
    shipped = load_model()
    zeros = tuple(0.0 for _ in FEATURES)
    threshold = shipped.threshold
    logit = math.log(threshold / (1 - threshold))
    below = replace(shipped, weights=zeros, bias=logit - 0.01)
    above = replace(shipped, weights=zeros, bias=logit + 0.01)
    ctx = _ctx("Totally unrelated: can I change my password?", *CASE)
    assert detect_learned(ctx, "support", below).action == "continue"
    assert detect_learned(ctx, "support", above).reset


def test_the_reason_names_a_feature_that_is_there_not_one_that_is_absent() -> None:
    """No silence before the message: the reset never reads as a return, however much
    the missing gap weighs (the shipped support head's gap weights are negative)."""
    shipped = load_model()
    gap = {"log_gap_hours", "overnight", "returned", "gap_novel"}
    weights = tuple(-5.0 if n in gap else 0.0 for n in FEATURES)
    model = replace(shipped, weights=weights, bias=0.0)
    ctx = _ctx("Totally unrelated: can I change my password?", *CASE)
    decision = detect_learned(ctx, "support", model)
    assert decision.reset, decision.signals
    assert decision.reason == "new_subject"
    after_a_week = replace(ctx, last_activity=NOW - timedelta(days=7))
    positive = replace(model, weights=tuple(-w for w in weights))
    assert detect_learned(after_a_week, "support", positive).reason == "returned_new_subject"


def test_signals_carry_probability_threshold_and_version() -> None:
    """Reports show p, the threshold, the model version and the profile, as JSON."""
    decision = detect_learned(_ctx("Will I need to return the broken one?", *CASE), "chat")
    model = load_model("chat")
    assert 0 <= float(str(decision.signals["p"])) <= 1
    assert decision.signals["threshold"] == round(model.threshold, 4)
    assert decision.signals["model"] == model.version
    assert decision.signals["profile"] == "chat"
    json.dumps(decision.signals)


def test_features_are_a_fixed_length_vector_of_floats() -> None:
    """One float per feature name, whatever the context (empty window, no clock gap)."""
    for ctx in (_ctx("hi"), _ctx("Sigue fallando, ¿y ahora qué?", *CASE)):
        values = extract(ctx).values
        assert len(values) == len(FEATURES)
        assert all(isinstance(v, float) and math.isfinite(v) for v in values)


def test_trainer_on_a_tiny_slice_writes_a_loadable_model(tmp_path: Path) -> None:
    """bench.topic_model.train on 6 dialogues + 6 sessions writes a model this package loads."""
    pytest.importorskip("numpy")
    from bench.topic_model import train as topic_train

    lines = [
        ["hi how are you", -1],
        ["good , i love dogs . you ?", 0],
        ["i have two dogs", 0],
        ["what do you do for a living ?", 1],
        ["i am a nurse", 0],
        ["do you like pizza ?", 1],
        ["yes pizza is great", 0],
    ]
    tiage = tmp_path / "tiage"
    tiage.mkdir()
    dialogs = {str(n): lines[: 5 + n % 3] for n in range(6)}
    (tiage / "anno_train.json").write_text(json.dumps(dialogs), encoding="utf-8")
    out = tmp_path / "model.json"
    argv = ["--tiage", str(tiage), "--limit", "6", "--folds", "2", "--quick", "--out", str(out)]
    topic_train.main(argv)
    heads = parse_model(json.loads(out.read_text(encoding="utf-8")))
    assert set(heads) == {"support", "chat"}
    assert all(h.features == FEATURES for h in heads.values())
    assert isinstance(heads["chat"], BoostedModel)
    assert isinstance(heads["support"], TopicModel)
    # `--only chat` refits the chat head and keeps the file's support head as it was, even
    # one written before heads named their kind
    raw = json.loads(out.read_text(encoding="utf-8"))
    del raw["profiles"]["support"]["kind"]
    out.write_text(json.dumps(raw), encoding="utf-8")
    topic_train.main([*argv, "--only", "chat", "--chat", "logistic"])
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["profiles"]["support"] == raw["profiles"]["support"]
    assert again["heldout"] == raw["heldout"]
    reread = parse_model(again)
    assert isinstance(reread["chat"], TopicModel)
    assert reread["support"] == heads["support"]


def test_the_support_threshold_is_held_to_a_precision_of_099() -> None:
    """The trainer's support threshold: the best recall among those with precision ≥ 0.99
    (and issue 28's distractor bar), not among those at the varied set's 0.9: a threshold
    that finds more switches at 0.95 loses long single cases their facts."""
    pytest.importorskip("numpy")
    from bench.topic_model import train as topic_train
    from bench.topic_model.scores import Counts

    def counts(t: float) -> Counts:
        if t < 0.5:  # precision 0.95, recall 0.95
            return Counts(tp=95, fp=5, fn=5, side=0, distractors=400)
        found = round(100 * (1 - t))  # precision 1.00, recall falling with the threshold
        return Counts(tp=found, fp=0, fn=100 - found, side=0, distractors=400)

    cv = {t: (Counts(), counts(t)) for t in topic_train.THRESHOLDS}
    assert topic_train.SUPPORT_PRECISION == 0.99
    assert topic_train.pick_thresholds(cv)["support"] == 0.5


# x0 <= 0.5 ? (x1 <= 2 ? -1.0 : 0.5) : 1.5, and a stump on x1 (root values: the mean output)
TREE_A = ((0, 0.5, 1, 4, 0.2), (1, 2.0, 2, 3, -0.4), (-1, 0.0, 0, 0, -1.0),
          (-1, 0.0, 0, 0, 0.5), (-1, 0.0, 0, 0, 1.5))  # fmt: skip
TREE_B = ((1, 1.0, 1, 2, 0.0), (-1, 0.0, 0, 0, -0.3), (-1, 0.0, 0, 0, 0.3))


def _model(threshold: float = 0.5) -> BoostedModel:
    return BoostedModel("t", ("a", "b"), (0.4, 1.5), (TREE_A, TREE_B), -0.25, threshold)


def test_the_logit_is_the_base_plus_each_trees_leaf() -> None:
    """A row goes left at or under a split's threshold; the logit adds one leaf a tree."""
    model = _model()
    assert model.logit((0.5, 3.0)) == pytest.approx(-0.25 + 0.5 + 0.3)
    assert model.logit((0.9, 0.0)) == pytest.approx(-0.25 + 1.5 - 0.3)
    assert model.probability((0.1, 1.0)) == pytest.approx(sigmoid(-0.25 - 1.0 - 0.3))


def test_contributions_split_the_logit_between_the_features_on_the_path() -> None:
    """Each split's change of value goes to its feature: bias plus the parts is the logit,
    and a feature no split on the path reads gets nothing."""
    model = _model()
    for row in ((0.5, 3.0), (0.9, 0.0), (0.1, 1.0)):
        parts = model.contributions(row)
        assert model.bias + sum(parts.values()) == pytest.approx(model.logit(row))
    right = model.contributions((0.9, 0.0))
    assert right["a"] == pytest.approx(1.5 - 0.2)  # the root's split sent it right
    assert right["b"] == pytest.approx(-0.3)  # only tree B read b on this path


def test_a_boosted_head_is_read_from_the_model_file_and_checked() -> None:
    """The file's `gradient_boosting` head loads; a tree pointing outside itself, back up
    itself (its walk would never end) or at a feature the file does not name is refused."""

    def doc(trees: object) -> dict[str, object]:
        head = {"kind": "gradient_boosting", "means": [0.4, 1.5], "base": -0.25,
                "trees": trees, "threshold": 0.5}  # fmt: skip
        return {"version": "t", "features": ["a", "b"], "profiles": {"chat": head}}

    loaded = parse_model(doc([list(map(list, TREE_A)), list(map(list, TREE_B))]), ("a", "b"))
    assert loaded["chat"].logit((0.5, 3.0)) == pytest.approx(_model().logit((0.5, 3.0)))
    with pytest.raises(ModelFileError, match="do not match"):
        parse_model(doc([[[0, 0.5, 1, 9, 0.0], [-1, 0, 0, 0, 1.0]]]), ("a", "b"))
    with pytest.raises(ModelFileError, match="do not match"):
        parse_model(doc([[[5, 0.5, 1, 2, 0.0], [-1, 0, 0, 0, 1.0], [-1, 0, 0, 0, 1.0]]]),
                    ("a", "b"))  # fmt: skip
    with pytest.raises(ModelFileError, match="do not match"):  # a loop: node 1 → node 1
        parse_model(doc([[[0, 0.5, 1, 2, 0.0], [1, 0.5, 1, 2, 0.0], [-1, 0, 0, 0, 1.0]]]),
                    ("a", "b"))  # fmt: skip
    with pytest.raises(ModelFileError, match="malformed"):
        parse_model({**doc([]), "profiles": {"chat": {"kind": "forest"}}}, ("a", "b"))


def test_scikit_learns_trees_score_the_same_in_the_product() -> None:
    """The trainer keeps a fitted model's trees only: the product's pure-Python reading
    gives scikit-learn's own probabilities, row for row."""
    np = pytest.importorskip("numpy")
    ensemble = pytest.importorskip("sklearn.ensemble")
    from bench.topic_model.boost import from_sklearn

    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(scale=0.5, size=400)) > 0
    clf = ensemble.HistGradientBoostingClassifier(max_iter=30, max_depth=3, random_state=0)
    clf.fit(x, y.astype(int))
    model = from_sklearn(clf, x.mean(0).tolist(), ("a", "b", "c"))
    test = rng.normal(size=(200, 3))
    expected = clf.predict_proba(test)[:, 1]
    got = [model.probability(tuple(row)) for row in test.tolist()]
    assert got == pytest.approx(expected.tolist(), abs=1e-9)


def test_the_written_head_sends_rows_on_a_threshold_where_the_fit_did() -> None:
    """With more distinct values than bins, scikit-learn's thresholds are values the
    training rows take; the model file keeps them as fitted, so a training row on one
    goes the way the fit sent it (rounded to 6 decimals, some went the other way)."""
    np = pytest.importorskip("numpy")
    ensemble = pytest.importorskip("sklearn.ensemble")
    from bench.topic_model.boost import as_json, from_sklearn

    rng = np.random.default_rng(5)
    x = rng.uniform(size=(600, 3))
    y = (x[:, 0] + x[:, 1] > 1.0) ^ (rng.uniform(size=600) < 0.1)
    clf = ensemble.HistGradientBoostingClassifier(max_iter=30, max_depth=3, random_state=0)
    clf.fit(x, y.astype(int))
    model = from_sklearn(clf, x.mean(0).tolist(), ("a", "b", "c"))
    head = {**as_json(model), "threshold": 0.5}
    names = ("a", "b", "c")
    written = parse_model({"version": "t", "features": list(names), "profiles": {"chat": head}},
                          names)  # fmt: skip
    got = [written["chat"].logit(tuple(row)) for row in x.tolist()]
    assert got == pytest.approx(clf.decision_function(x).tolist(), abs=1e-4)


def test_the_shipped_chat_head_is_boosted_and_decides() -> None:
    """The packaged chat head is gradient-boosted over FEATURES; a decision carries its
    probability and the features that pushed it, and resets only at the threshold."""
    chat = load_models()["chat"]
    assert isinstance(chat, BoostedModel)
    assert chat.features == FEATURES
    assert len(chat.means) == len(FEATURES)
    assert 0 < chat.threshold < 1
    ctx = _ctx("what do you do for a living ?", ("i have two dogs", "i love dogs ! what breed ?"))
    decision = detect_learned(ctx, "chat")
    p = decision.signals["p"]
    assert isinstance(p, float)
    assert p == round(chat.probability(extract(ctx).values), 4)
    assert decision.reset == (p >= chat.threshold)
    assert decision.signals["top_features"] or not decision.reset
