"""`bench.topic_model.candidates`: the shipped regression, the embedding cosines and
gradient boosting scored on the same rows and folds."""

from __future__ import annotations

import numpy as np
import pytest

from bench.topic_model import candidates
from bench.topic_tiage import DEFAULT_DATA
from memory.topic.context import TopicContext
from memory.types import Exchange


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return candidates.embedder()


def _ctx(message: str, *users: str) -> TopicContext:
    window = tuple(Exchange(n, 1, u, "ok, anything else?", True) for n, u in enumerate(users, 1))
    return TopicContext(
        message=message,
        window=window,
        summary="",
        now=None,
        last_activity=None,
        idle_reset_hours=0,
        summary_rounds=0,
        language="en",
    )


def test_the_cosines_rank_a_follow_up_above_another_subject(embed) -> None:  # type: ignore[no-untyped-def]
    """A follow-up about the same parcel is closer to the window than a recipe is."""
    window = ("my parcel to canada has not arrived", "the tracking says it left the depot")
    same = candidates.cosines(_ctx("is my parcel still stuck in the depot?", *window), embed)
    other = candidates.cosines(_ctx("how long do i bake a chocolate cake?", *window), embed)
    assert same[1] > other[1]
    assert same[2] > other[2]
    assert all(-1.0 <= c <= 1.0 for c in (*same, *other))
    assert candidates.cosines(_ctx("hello"), embed) == (0.0, 0.0, 0.0, 0.0)


def test_at_precision_finds_the_lowest_threshold_that_reaches_it() -> None:
    """Four support rows: at 0.99 precision only the top one is said (recall 1/2), and a
    distractor above the threshold is counted."""
    y = np.array([True, True, False, False])
    rows = candidates.Rows(
        x=None,
        embedding=None,
        y=y,
        support=np.array([True] * 4),
        distractor=np.array([False, False, True, False]),
        fold=np.zeros(4, int),
    )
    p = np.array([0.9, 0.3, 0.5, 0.1])
    threshold, recall, distractors = candidates.at_precision(p, rows, 0.99) or (0, 0, 0)
    assert 0.5 < threshold <= 0.9
    assert recall == 0.5
    assert distractors == 0
    low = candidates.at_precision(np.array([0.9, 0.6, 0.7, 0.1]), rows, 0.6)
    assert low is not None
    assert low[1:] == (1.0, 1)


@pytest.mark.skipif(not (DEFAULT_DATA / "anno_train.json").exists(), reason="TIAGE not here")
def test_a_small_run_scores_every_arm(capsys: pytest.CaptureFixture[str]) -> None:
    """Eight dialogues of each set, two folds: every arm and support weight has a TIAGE F1
    and a cell per precision, and the table is printed."""
    out = candidates.main(["--limit", "8", "--folds", "2"])
    assert set(out) == {
        "logistic regression (shipped)",
        "lr + embedding cosines",
        "gradient boosting",
    }
    for weights in out.values():
        assert set(weights) == set(candidates.SUPPORT_WEIGHTS)
        for cells in weights.values():
            assert 0.0 < float(str(cells["tiage_f1"])) <= 1.0
            assert {"P≥0.95", "P≥0.99"} <= set(cells)
    assert "gradient boosting" in capsys.readouterr().out
