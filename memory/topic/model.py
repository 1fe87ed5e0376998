"""The learned topic model: one head per profile, shipped as a small versioned JSON file.

`bench/topic_model/train.py` writes `memory/topic/models/topic-v4.json`: one head per profile
(`support`, `chat`), each a logistic regression (its standardisation, weights, bias) or
gradient-boosted trees (`BoostedModel`), with a threshold, all chosen by
cross-validation. This module loads it once, checks it against `features.FEATURES` (a
file for other features is refused with the names that differ) and scores a feature
vector in pure Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Protocol

from memory import trees
from memory.topic.features import FEATURES
from memory.trees import Node, read_node
from memory.trees import as_list as _list

MODEL_FILE = "topic-v4.json"


class ModelFileError(ValueError):
    """The shipped model file is missing a field or was trained on other features."""


@dataclass(frozen=True, slots=True)
class TopicModel:
    """One profile's head: p = sigmoid(bias + sum(w * (x - mean) / scale))."""

    version: str
    features: tuple[str, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float

    def logit(self, values: Sequence[float]) -> float:
        total = self.bias
        for x, m, s, w in zip(values, self.means, self.scales, self.weights, strict=True):
            total += w * (x - m) / s
        return total

    def probability(self, values: Sequence[float]) -> float:
        return sigmoid(self.logit(values))

    def contributions(self, values: Sequence[float]) -> dict[str, float]:
        """Each feature's share of the logit: what pushed the decision."""
        parts = zip(values, self.means, self.scales, self.weights, strict=True)
        return {n: w * (x - m) / s for n, (x, m, s, w) in zip(self.features, parts, strict=True)}


@dataclass(frozen=True, slots=True)
class BoostedModel:
    """One profile's head as gradient-boosted trees: p = sigmoid(base + each tree's leaf).
    `means` are the training rows' (what `reason_of` calls a feature being there)."""

    version: str
    features: tuple[str, ...]
    means: tuple[float, ...]
    trees: tuple[tuple[Node, ...], ...]
    base: float
    threshold: float

    @property
    def bias(self) -> float:
        """The logit before any split: the base and each tree's root value."""
        return self.base + sum(nodes[0][4] for nodes in self.trees)

    def logit(self, values: Sequence[float]) -> float:
        return trees.logit(self.base, self.trees, values)

    def probability(self, values: Sequence[float]) -> float:
        return sigmoid(self.logit(values))

    def contributions(self, values: Sequence[float]) -> dict[str, float]:
        """Each feature's share of the logit past `bias`: along each tree's path, the
        change of value a split made goes to the split's feature (Saabas)."""
        parts = [0.0] * len(self.features)
        for nodes in self.trees:
            node = nodes[0]
            while (f := node[0]) >= 0:
                child = nodes[node[2] if values[f] <= node[1] else node[3]]
                parts[f] += child[4] - node[4]
                node = child
        return dict(zip(self.features, parts, strict=True))


class Head(Protocol):
    """What the decision reads of a profile's head, whatever its kind."""

    @property
    def version(self) -> str: ...
    @property
    def features(self) -> tuple[str, ...]: ...
    @property
    def means(self) -> tuple[float, ...]: ...
    @property
    def bias(self) -> float: ...
    @property
    def threshold(self) -> float: ...

    def logit(self, values: Sequence[float]) -> float: ...
    def probability(self, values: Sequence[float]) -> float: ...
    def contributions(self, values: Sequence[float]) -> dict[str, float]: ...


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def parse_model(raw: Mapping[str, object], expected: Sequence[str] = FEATURES) -> dict[str, Head]:
    """Each profile's head from the JSON document, or ModelFileError saying what is wrong."""
    try:
        version = str(raw["version"])
        names = tuple(str(n) for n in _list(raw["features"]))
        heads = {str(p): _head(version, names, h) for p, h in _dict(raw["profiles"]).items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"topic model file is malformed: {exc!r}") from exc
    if names != tuple(expected):
        missing = sorted(set(expected) - set(names))
        unknown = sorted(set(names) - set(expected))
        raise ModelFileError(
            f"topic model {version} was trained on other features (missing {missing}, "
            f"unknown {unknown}, or another order): retrain it with "
            "`python -m bench.topic_model.train`"
        )
    for profile, model in heads.items():
        if not _fits(model, len(names)):
            raise ModelFileError(f"topic model {version}/{profile}: vectors do not match")
    return heads


def _fits(model: Head, size: int) -> bool:
    """A head's vectors are as long as the feature list; each split of its trees reads a
    named feature and points further down its own tree (so a walk always ends)."""
    if isinstance(model, BoostedModel):
        return (
            len(model.means) == size
            and bool(model.trees)
            and all(trees.walks(nodes, size) for nodes in model.trees)
        )
    assert isinstance(model, TopicModel)
    sizes = {len(model.means), len(model.scales), len(model.weights)}
    return sizes == {size} and all(s > 0 for s in model.scales)


@cache
def load_models(name: str = MODEL_FILE) -> dict[str, Head]:
    """The packaged model's heads, read and checked once per process."""
    folder = resources.files("memory.topic").joinpath("models")
    return parse_model(json.loads(folder.joinpath(name).read_text(encoding="utf-8")))


def load_model(profile: str = "support") -> Head:
    """The packaged head of `profile`."""
    return load_models()[profile]


LOGISTIC = "logistic_regression"
BOOSTED = "gradient_boosting"


def _head(version: str, names: tuple[str, ...], raw: object) -> Head:
    """A head of its `kind`; a head without one is a regression (topic-v4's first file)."""
    head = _dict(raw)
    kind = str(head.get("kind", LOGISTIC))
    if kind == BOOSTED:
        return BoostedModel(
            version=version,
            features=names,
            means=_floats(head["means"]),
            trees=tuple(tuple(read_node(n) for n in _list(t)) for t in _list(head["trees"])),
            base=float(str(head["base"])),
            threshold=float(str(head["threshold"])),
        )
    if kind != LOGISTIC:
        raise ValueError(f"unknown head kind {kind!r}")
    return TopicModel(
        version=version,
        features=names,
        means=_floats(head["means"]),
        scales=_floats(head["scales"]),
        weights=_floats(head["weights"]),
        bias=float(str(head["bias"])),
        threshold=float(str(head["threshold"])),
    )


def _dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _floats(value: object) -> tuple[float, ...]:
    return tuple(float(str(v)) for v in _list(value))
