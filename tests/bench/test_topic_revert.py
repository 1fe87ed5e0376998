"""`bench.topic_model.revert`: the soft reset's revert arms in the topic trainer's CV."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench import blind, topics
from bench.topic_model import revert, train
from bench.topic_tiage import DEFAULT_DATA
from memory.soft_reset.case import previous_case
from memory.soft_reset.revert import RevertCheck, decide_revert
from memory.topic.context import TopicContext
from memory.types import Exchange

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CASE = (
    Exchange(1, 1, "My router drops the wifi every evening, ticket NB-448213", "Restart it?"),
    Exchange(2, 1, "I restarted the router, the wifi still drops at night", "Noted."),
)
NEW = (Exchange(3, 1, "Another thing: my invoice shows a double charge", "Let me see."),)


def _check(message: str) -> RevertCheck:
    case = previous_case(1, CASE, CASE[-1].reply_text)
    return RevertCheck(message, case, "auto:new_subject", NEW, 1)


def test_features_read_the_closed_case_in_the_message() -> None:
    """A message naming the case's ticket and words reads as the old case; one about the
    invoice does not."""
    names = revert.FEATURES
    old = dict(
        zip(names, revert.features(_check("NB-448213: the router wifi drops again")), strict=True)
    )
    new = dict(zip(names, revert.features(_check("the invoice charge is double")), strict=True))
    assert len(revert.features(_check("x"))) == len(names)
    assert old["old_ids"] == 1
    assert old["old_terms"] >= 2
    assert new["old_ids"] == 0
    assert new["old_terms"] == 0
    assert new["new_terms"] >= 1


def test_without_words_keeps_the_facts_branch_and_drops_the_words() -> None:
    """Shared words revert in the product's rule and not in `no_words`; a named ticket
    reverts in both."""
    words = _check("the wifi of the router drops every evening")
    ticket = _check("any news on NB-448213?")
    assert decide_revert(words) is not None
    assert revert.without_words(words) is None
    assert revert.without_words(ticket) is not None


def _unit(labels: list[bool]) -> train.Unit:
    turns = tuple(
        topics.Turn(f"message {n}", "ok", T0 + timedelta(minutes=n), "x", "followup")
        for n in range(len(labels))
    )
    return train.Unit("u", "support", labels, ["followup"] * len(labels), _unused, turns=turns)


def _unused(start: int, i: int) -> TopicContext:
    raise AssertionError("rows_of reads the turns, not the topic context")


def test_rows_say_whether_a_message_still_belongs_to_the_case_before_the_reset() -> None:
    """Resets taken at each turn: the messages after a false one continue its case until
    a gold reset; after a true one they never do."""
    rows = revert.rows_of(_unit([False, False, False, True, False]))
    # t=1: j=2 continues, j=3 is the gold reset, j=4 after it; t=2: j=3, j=4; t=3: j=4;
    # t=4: nothing after it.
    assert [r.continues for r in rows] == [True, False, False, False, False, False]
    assert all(len(r.x) == len(revert.FEATURES) for r in rows)


@pytest.mark.skipif(not (DEFAULT_DATA / "anno_train.json").exists(), reason="TIAGE not here")
def test_every_arm_is_scored_on_the_same_gold() -> None:
    """A small run: every (threshold, arm) sees the same true resets and distractors, and
    the product's rule is one of the arms."""
    counts = revert.main(["--limit", "8", "--thresholds", "0.5"])
    arms = {name for _, name in counts}
    assert {"rules", "no_words"} <= arms
    assert len(arms) == 2 + len(revert.REVERT_AT)
    gold = {(c.tp + c.fn, c.distractors) for c in counts.values()}
    assert len(gold) == 1
    assert next(iter(gold))[0] > 0


def test_the_blind_folder_is_refused() -> None:
    """The held-out arms never read the blind set: `bench.blind` alone does."""
    with pytest.raises(SystemExit):
        revert.heldout(blind.DEFAULT_DATA, [], [0.5])
