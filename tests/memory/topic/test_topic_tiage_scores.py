"""The TIAGE bench's scoring and pairing (bench/topic_tiage.py)."""

from __future__ import annotations

import pytest

from bench.topic_tiage import pair, score


def test_bench_scores_precision_recall_f1() -> None:
    """score() on a tiny handmade sample: tp=2, fp=1, fn=2 → P=2/3, R=1/2, F1=4/7."""
    gold = [True, True, True, True, False, False]
    predicted = [True, True, False, False, True, False]
    result = score(gold, predicted)
    assert (result.tp, result.fp, result.fn) == (2, 1, 2)
    assert result.precision == pytest.approx(2 / 3)
    assert result.recall == pytest.approx(1 / 2)
    assert result.f1 == pytest.approx(4 / 7)


def test_bench_scores_degenerate_cases() -> None:
    """No predicted shifts gives zeros instead of dividing by zero; always-shift has R=1."""
    assert score([True, False], [False, False]).f1 == 0.0
    always = score([True, False, False, False], [True] * 4)
    assert (always.precision, always.recall) == (0.25, 1.0)
    assert always.f1 == pytest.approx(0.4)


def test_bench_pairs_utterances_from_the_end() -> None:
    """The utterance before the message is the last reply; an odd first one has no user side."""
    exchanges = pair(["a", "b", "c", "d", "e"], window=6)
    assert [(e.user_text, e.reply_text) for e in exchanges] == [("", "a"), ("b", "c"), ("d", "e")]
    assert [(e.user_text, e.reply_text) for e in pair(["a", "b", "c"], window=1)] == [("b", "c")]
