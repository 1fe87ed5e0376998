"""The bench's replay of resets that stand (`bench.topic_model.soft`): a reset the next
message reverts does not stand, a real one does, and the trainer's replay agrees with
the benches' one; the trainer's support data keeps its held-out half out of the fit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench import topics
from bench.topic_model import data
from bench.topic_model.soft import predict_standing, replay_standing
from memory.topic.context import TopicContext
from memory.types import TopicDecision

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
ROUTER = (
    ("Hola, el router no conecta desde la migración de la fibra. Ticket #4821.",
     "Vamos a revisarlo. ¿La IP del router es 192.168.1.1?"),
    ("Sí, 192.168.1.1, y los DNS apuntan a ns1.example.net.",
     "Bien. Reinicie el router y cambie los DNS del router."),
    ("Buenos días, aquí estoy otra vez.", "Buenos días. ¿Sigue el router sin conexión?"),
    ("Sí, el router de fibra sigue sin conexión y el ticket #4821 sigue abierto.",
     "Lo escalo al equipo de red."),
)  # fmt: skip
NEW_CASE = (
    ("Otra cosa: quiero darme de baja del gimnasio de la calle Mayor.",
     "De acuerdo. ¿Me da su número de socio?"),
    ("Es el socio 77120, la cuota de diciembre ya está pagada.",
     "Tramito la baja del socio 77120."),
)  # fmt: skip


def session(pairs: tuple[tuple[str, str], ...], labels: tuple[str, ...]) -> topics.Session:
    turns = tuple(
        topics.Turn(u, a, T0 + timedelta(minutes=5 * n), label, "followup")
        for n, ((u, a), label) in enumerate(zip(pairs, labels, strict=True))
    )
    return topics.Session("s", "es", "test", turns)


def resets_at(*turns: int) -> topics.Detector:
    """A detector that resets on the messages of turns numbered `turns` (0: ROUTER[0],
    4: NEW_CASE[0]), recognised by their text."""
    said = [u for u, _ in (*ROUTER, *NEW_CASE)]
    texts = {said[n] for n in turns}

    def detect(ctx: TopicContext) -> TopicDecision:
        return TopicDecision("reset" if ctx.message in texts else "continue", "test", {})

    return detect


def test_a_false_reset_the_next_message_continues_does_not_stand() -> None:
    s = session(ROUTER, ("start", "continue", "continue", "continue"))
    raw = topics.predict(s, resets_at(2))
    standing, reverted = predict_standing(s, resets_at(2))
    assert raw == [False, False, True, False]
    assert standing == [False, False, False, False]
    assert reverted == 1


def test_a_real_reset_stands() -> None:
    s = session((*ROUTER[:2], *NEW_CASE), ("start", "continue", "reset", "continue"))
    standing, reverted = predict_standing(s, resets_at(4))
    assert standing == [False, False, True, False]
    assert reverted == 0


def test_a_reset_on_a_message_naming_the_case_is_not_made() -> None:
    """The product's veto, replayed: the detector resets on the message naming the open
    ticket, and the replay keeps the episode (no reset, nothing to revert)."""
    s = session(ROUTER, ("start", "continue", "continue", "continue"))
    raw = topics.predict(s, resets_at(3))
    standing, reverted = predict_standing(s, resets_at(3))
    assert raw == [False, False, False, True]
    assert standing == [False] * 4
    assert reverted == 0


def test_a_second_wrong_reset_reverts_on_the_first_case_s_facts() -> None:
    """Two resets in a row, the second closing a one-message episode: the message after
    it names the router case's ticket, so the second reset is undone (the chain carries
    the router case on, as `Episodes.carried_over` does); the first one stands."""
    third = ("Y otra cosa: la factura 2024-118 viene con el IVA mal.", "Lo reviso.")
    back = ("Perdona, lo del ticket #4821: el router no navega.", "Lo miro.")
    pairs = (*ROUTER[:2], NEW_CASE[0], third, back)
    s = session(pairs, ("start", "continue", "reset", "reset", "continue"))
    said = {NEW_CASE[0][0], third[0]}

    def detect(ctx: TopicContext) -> TopicDecision:
        return TopicDecision("reset" if ctx.message in said else "continue", "test", {})

    standing, reverted = predict_standing(s, detect)
    assert standing == [False, False, True, False, False]
    assert reverted == 1


def test_the_trainers_replay_agrees_with_the_benches() -> None:
    s = session(ROUTER, ("start", "continue", "continue", "continue"))
    p = {(0, 2): 0.9}  # only turn 2, in the first episode, looks like a new subject
    out = replay_standing(s.turns, lambda start, i: p.get((start, i), 0.1), 0.5)
    assert out == predict_standing(s, resets_at(2))[0] == [False] * 4


def test_the_held_out_half_is_never_fitted(tmp_path: Path) -> None:
    got = data.load()
    fit, held = {s.id for s in got.fit}, {s.id for s in got.heldout}
    assert fit
    assert held
    assert not fit & held
    assert {s.id for s in got.training} >= fit
    assert not held & {s.id for s in got.training}
    # every labelled session is on one side: a new one the split does not name is refused
    lines = topics.DEFAULT_DATA.read_text(encoding="utf-8").splitlines()
    extra = json.loads(lines[0]) | {"id": "not-in-the-split"}
    labelled = tmp_path / "sessions.jsonl"
    labelled.write_text("\n".join([*lines, json.dumps(extra)]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not-in-the-split"):
        data.load(labelled, written=None)


def test_every_written_file_is_read_and_an_absent_one_gives_none(tmp_path: Path) -> None:
    """Two written files: both are fitted, a missing third adds nothing, and the model
    file names only those that exist."""
    first = data.WRITTEN[0]
    missing = tmp_path / "absent.jsonl"
    one = data.load(written=first)
    both = data.load(written=(first, missing))
    assert [s.id for s in one.written] == [s.id for s in both.written]
    copy = tmp_path / "copy.jsonl"
    copy.write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    twice = data.load(written=(first, copy, missing))
    assert len(twice.written) == 2 * len(one.written)
    assert data.named((first, missing)) == "bench/data/support_train/sessions.jsonl"
    assert data.named((missing,)) == "none"


def test_the_long_cases_are_fitted_as_one_open_case_each() -> None:
    """support_train's and support_dev's long cases join the training sessions: each
    opens once and every later turn continues, so the model sees what must not reset;
    `long=None` leaves them out."""
    got = data.load()
    assert len(got.long) == 20  # 8 of support_train, 12 of support_dev
    assert {s.id.split("-")[0] for s in got.long} == {"wl", "dl"}  # support_train, support_dev
    for session in got.long:
        assert session.turns[0].label == "start"
        assert {t.label for t in session.turns[1:]} == {"continue"}
        assert len(session.turns) >= 40
    assert got.training[-len(got.long) :] == got.long
    assert data.load(long=None).long == ()


def test_support_dev2_is_not_fitted_and_its_held_half_never_is() -> None:
    """The default training reads none of support_dev2 (it measures the model), and
    naming its file still leaves the held half out: only the fit half's four cases."""
    dev2 = data.DATA / "support_dev2" / "longcase.jsonl"
    assert not [s.id for s in data.load().long if s.id.startswith("dl2-")]
    named = data.load(long=dev2).long
    assert len(named) == 4
    assert not {s.id for s in named} & data.HELD_LONG
    assert len(data.long_sessions(dev2)) == 4


def test_support_dev3_is_not_fitted_by_default_but_can_be_named() -> None:
    """Fitted, support_dev3 cost the held-out sets recall (its README): the default
    training leaves its sessions out, and `--written` naming its file brings all 60 in."""
    dev3 = data.DATA / "support_dev3" / "sessions.jsonl"
    assert not [s.id for s in data.load().written if s.id.startswith("w2-")]
    named = data.load(written=dev3).written
    assert len(named) == 60
    assert all(s.id.startswith("w2-") for s in named)
