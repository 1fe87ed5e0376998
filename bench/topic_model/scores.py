"""Counts of a topic detector's resets against gold labels, per dialogue replayed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bench import topics

DISTRACTOR_SCALE = 328  # issue 28: ≤ 1 false reset over 328 side questions and asides


class Scored(Protocol):
    gold: list[bool]
    kinds: list[str]


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    side: int = 0
    distractors: int = 0  # continues of a distractor kind (side question, aside, thanks…)

    def add(self, unit: Scored, predicted: Sequence[bool]) -> None:
        for gold, pred, kind in zip(unit.gold[1:], predicted[1:], unit.kinds[1:], strict=True):
            self.tp += gold and pred
            self.fp += pred and not gold
            self.fn += gold and not pred
            self.side += pred and kind in topics.SIDE_KINDS
            self.distractors += kind in topics.SIDE_KINDS and not gold

    @property
    def safe(self) -> bool:
        """Issue 28's bar for support: precision ≥ 0.9 and at most one reset standing on a
        distractor per `DISTRACTOR_SCALE` of them."""
        return self.precision >= 0.9 and self.side * DISTRACTOR_SCALE <= self.distractors

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "f1": round(self.f1, 3),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "side_resets": self.side,
            "distractors": self.distractors,
        }
