"""The learned topic model: its shipped file, its arithmetic, its decisions, its trainer."""

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
    ModelFileError,
    TopicModel,
    load_model,
    load_models,
    parse_model,
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
        assert len(model.weights) == len(model.means) == len(model.scales) == len(FEATURES)
        assert 0 < model.threshold < 1
    raw = _raw()
    assert raw["version"] == heads["support"].version
    assert {"training_data", "cv", "trained", "profiles"} <= set(raw)
    assert len(json.dumps(raw)) < 8_000  # a few KB


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
