"""The labelled support sessions (tests/data/topics): precision, recall, side questions."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from bench.topic_model.soft import predict_standing
from bench.topics import (
    Detector,
    Session,
    Turn,
    cue_only,
    evaluate,
    learned,
    load,
    predict,
    rules,
)

SESSIONS = load()
# The distractor kinds of this set (the blind sets add `update` and `status`).
LABELLED_SIDE_KINDS = ("side_question", "aside", "thanks", "other_domain", "return_same")


def test_the_set_is_varied_and_split() -> None:
    """≥ 40 sessions, both languages, every boundary and distractor kind, dev and held-out."""
    assert len(SESSIONS) >= 40
    assert {s.lang for s in SESSIONS} == {"es", "en"}
    assert {s.split for s in SESSIONS} == {"dev", "heldout"}
    kinds = Counter(t.kind for s in SESSIONS for t in s.turns)
    for kind in ("closure_new", "return_new", "abrupt", *LABELLED_SIDE_KINDS):
        assert kinds[kind] >= 5, kind
    # Hand-written, not one template: no two user messages are the same.
    users = [t.user for s in SESSIONS for t in s.turns]
    assert len(set(users)) == len(users)


@pytest.mark.parametrize("detect", [learned, rules], ids=["learned", "rules"])
@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_detector_meets_the_targets_on_each_split(split: str, detect: Detector) -> None:
    """Precision ≥ 0.9, recall ≥ 0.6, and no reset on a side question that stands, dev
    and held-out: at most one is made, and the next message reverts it (the soft reset).

    A training-set figure for both arms now (the rules were written from this set, the
    model is fitted to it): it pins that the fit holds, not how either generalises."""
    sessions = [s for s in SESSIONS if s.split == split]
    result = evaluate(sessions, detect)
    assert result.precision >= 0.9, result.misses
    assert result.recall >= 0.6, result.misses
    assert result.side_resets <= 1, result.misses
    standing = [
        turn.kind
        for s in sessions
        for turn, stands in zip(s.turns, predict_standing(s, detect)[0], strict=True)
        if stands and turn.kind in LABELLED_SIDE_KINDS
    ]
    assert standing == []


def test_naive_cue_rule_does_worse() -> None:
    """The naive 'any new-request cue resets' rule misses the targets: the set is not easy."""
    result = evaluate(SESSIONS, cue_only)
    assert result.side_resets > 0
    assert result.precision < 0.9


def _session(*turns: tuple[str, str, float, str]) -> Session:
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    return Session(
        "t",
        "es",
        "dev",
        tuple(
            Turn(user, reply, start + timedelta(hours=hours), "continue", "followup")
            for user, reply, hours, _ in turns
        ),
    )


@pytest.mark.parametrize(
    ("turns", "resets"),
    [
        pytest.param(
            [
                ("El pedido 55102 llegó roto.", "Tramito la devolución del 55102.", 0, ""),
                ("¿Cuándo recogen?", "Mañana por la tarde.", 0.1, ""),
                ("Hola, ¿hay novedades del pedido 55102?", "Sale hoy el nuevo.", 72, ""),
            ],
            [False, False, False],
            id="a-return-days-later-to-the-same-order-continues",
        ),
        pytest.param(
            [
                ("El router se reinicia solo.", "He actualizado el firmware del router.", 0, ""),
                ("Ya va bien, gracias.", "Perfecto.", 0.1, ""),
                ("Hola, ahora tengo una queja con la factura de marzo.", "La reviso.", 96, ""),
            ],
            [False, False, True],
            id="a-return-days-later-with-a-new-problem-resets",
        ),
        pytest.param(
            [
                ("El pedido 77310 no llega.", "Lo reviso: sale hoy.", 0, ""),
                (
                    "Otro asunto sobre el pedido 77310: ¿puedo cambiar la dirección?",
                    "Sí.",
                    0.1,
                    "",
                ),
            ],
            [False, False],
            id="an-explicit-change-naming-the-cases-order-continues",
        ),
        pytest.param(
            [
                (
                    "La pantalla parpadea.",
                    "Queremos dejarlo resuelto del todo, no con un apaño.",
                    0,
                    "",
                ),
                ("Parpadea sobre todo con poco brillo, desde el primer día.", "Anotado.", 0.1, ""),
            ],
            [False, False],
            id="an-agent-promising-a-resolution-closes-nothing",
        ),
    ],
)
def test_support_case_turns(turns: list[tuple[str, str, float, str]], resets: list[bool]) -> None:
    """Days of silence, 'otro asunto' or a promised fix decide nothing alone: the same
    order continues the case, a new problem sharing nothing with it is a new episode."""
    assert predict(_session(*turns), learned) == resets


def test_the_long_support_case_never_resets() -> None:
    """The 320-turn single case of bench.tokens (returns days later, follow-ups, new
    words) stays one episode under the default detector."""
    from bench.data.transcripts import long_support

    for replies in ("llm", "terse"):
        turns = long_support(replies=replies)
        session = Session(
            "long",
            "es",
            "dev",
            tuple(Turn(t.user, t.reply, t.ts, "continue", "followup") for t in turns),
        )
        assert not any(predict(session, learned))
