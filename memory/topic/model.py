"""The learned topic model: logistic regression shipped as a small versioned JSON file.

`bench/topic_model/train.py` writes `memory/topic/models/topic-v4.json`: one head per profile
(`support`, `chat`), each with its standardisation, weights, bias and threshold, all
chosen by cross-validation. This module loads it once, checks it against
`features.FEATURES` (a file for other features is refused with the names that differ)
and scores a feature vector in pure Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from memory.topic.features import FEATURES

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


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def parse_model(
    raw: Mapping[str, object], expected: Sequence[str] = FEATURES
) -> dict[str, TopicModel]:
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
        sizes = {len(model.means), len(model.scales), len(model.weights)}
        if sizes != {len(names)} or any(s <= 0 for s in model.scales):
            raise ModelFileError(f"topic model {version}/{profile}: vectors do not match")
    return heads


@cache
def load_models(name: str = MODEL_FILE) -> dict[str, TopicModel]:
    """The packaged model's heads, read and checked once per process."""
    folder = resources.files("memory.topic").joinpath("models")
    return parse_model(json.loads(folder.joinpath(name).read_text(encoding="utf-8")))


def load_model(profile: str = "support") -> TopicModel:
    """The packaged head of `profile`."""
    return load_models()[profile]


def _head(version: str, names: tuple[str, ...], raw: object) -> TopicModel:
    head = _dict(raw)
    return TopicModel(
        version=version,
        features=names,
        means=_floats(head["means"]),
        scales=_floats(head["scales"]),
        weights=_floats(head["weights"]),
        bias=float(str(head["bias"])),
        threshold=float(str(head["threshold"])),
    )


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _floats(value: object) -> tuple[float, ...]:
    return tuple(float(str(v)) for v in _list(value))
