"""Replay probes: dry runs at their point of the session, reported apart, changing nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.tools import _print_summary
from bot.ops.replay import TranscriptError, read_transcript, run_replay
from bot.ops.report import Report, TurnReport
from config.settings import Settings
from tests.bot.ops.conftest import conversation, write_transcript

DETAIL = "Mi router es el modelo Zyxel XR-5521 y la IP fija 83.44.120.7"


def case(session: str = "a") -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"role": "user", "session": session, "content": DETAIL},
        {"role": "assistant", "session": session, "content": "Anotado el router y la IP."},
    ]
    return lines + conversation(session, "PED", 8, scripted=True)


def probe(text: str, session: str = "a") -> dict[str, Any]:
    return {"role": "user", "session": session, "content": text, "probe": True}


def real(contexts: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (c["session"], c["system"], json.dumps(c["messages"], ensure_ascii=False))
        for c in contexts
        if not c["probe"]
    ]


async def test_probes_are_flagged_and_change_nothing(tmp_path: Path, settings: Settings) -> None:
    """With probes the real turns send the same requests and totals; probes are flagged."""
    plain = case()
    probed = [*plain[:6], probe("¿Qué IP te di?"), *plain[6:], probe("¿Y el router?")]
    before = await run_replay(write_transcript(tmp_path / "a.jsonl", plain), settings)
    after = await run_replay(write_transcript(tmp_path / "b.jsonl", probed), settings)
    assert real(after.contexts) == real(before.contexts)
    assert after.as_json()["totals"] == before.as_json()["totals"]
    flagged = [t for t in after.turns if t.probe]
    assert len(flagged) == 2
    assert sum(1 for c in after.contexts if c["probe"]) == 2
    assert all(not t.model_called for t in flagged)
    assert len(after.turns) == len(before.turns) + 2


async def test_a_probe_is_assembled_like_a_turn_and_recalls(
    tmp_path: Path, settings: Settings
) -> None:
    """A late probe about an early detail gets it through recall, as a real turn would."""
    lines = [*case(), probe("¿Qué IP fija te di para el router?")]
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    last, context = report.turns[-1], report.contexts[-1]
    assert last.probe
    assert last.recall_exchanges == 1
    assert last.recall_tokens > 0
    assert DETAIL in context["system"]
    assert context["messages"][-1] == {"role": "user", "content": lines[-1]["content"]}
    assert last.prompt_tokens > 0
    assert last.turn == report.turns[-2].turn + 1
    real_turns = report.as_json()["turns"][:-1]
    assert all(t["recall_exchanges"] == 0 and not t["probe"] for t in real_turns[:3])


async def test_a_probe_the_bot_would_answer_itself_sends_nothing(
    tmp_path: Path, settings: Settings
) -> None:
    """A probe of a command, a blank line or an oversized message reports what its real
    turn would: no request (it was assembled as a chat message); a probe is stripped as a
    real message is."""
    lines = [*case()[:4], probe("/reset"), probe("   "), probe("x" * 20_000)]
    lines += [probe("  ¿Qué IP te di?  "), {**probe("¿Qué IP te di?"), "probe": False}]
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    answered = report.contexts[-5:-2]
    assert [c["messages"][-1]["content"] for c in answered] == ["/reset", "   ", "x" * 20_000]
    assert all(c["system"] == "" and len(c["messages"]) == 1 for c in answered)
    assert [t.prompt_tokens for t in report.turns[-5:-2]] == [0, 0, 0]
    stripped, sent = report.contexts[-2:]
    assert stripped["messages"] == sent["messages"]
    assert report.turns[-2].prompt_tokens == report.turns[-1].prompt_tokens


def test_probe_lines_take_no_reply_and_keep_the_clock(tmp_path: Path) -> None:
    """A probe is never answered by the next assistant line and does not move time."""
    lines = [
        {"role": "user", "content": "uno"},
        {"role": "assistant", "content": "r1"},
        probe("¿sonda?", session="default"),
        {"role": "user", "content": "dos"},
    ]
    turns = read_transcript(write_transcript(tmp_path / "t.jsonl", lines))
    assert [(t.text, t.probe, t.reply) for t in turns] == [
        ("uno", False, "r1"),
        ("¿sonda?", True, None),
        ("dos", False, None),
    ]
    without = read_transcript(write_transcript(tmp_path / "u.jsonl", lines[:2] + lines[3:]))
    assert [t.ts for t in turns if not t.probe] == [t.ts for t in without]


def test_a_bad_probe_value_is_a_clear_error(tmp_path: Path) -> None:
    """`"probe": "yes"` names the line and the field."""
    path = write_transcript(
        tmp_path / "t.jsonl", [{"role": "user", "content": "x", "probe": "yes"}]
    )
    with pytest.raises(TranscriptError, match='line 1: "probe"'):
        read_transcript(path)


async def test_recall_off_recalls_nothing(tmp_path: Path) -> None:
    """`VENTANA_RECALL=off`: the same late probe gets no recall block."""
    from tests.bot.ops.conftest import make_settings

    settings = make_settings(tmp_path, recall="off")
    lines = [*case(), probe("¿Qué IP fija te di para el router?")]
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    assert report.turns[-1].recall_exchanges == 0
    assert "<recall>" not in report.contexts[-1]["system"]
    assert report.as_json()["settings"]["recall"] == "off"


def _turn(session: str, n: int, **kw: Any) -> TurnReport:
    fields: dict[str, Any] = {
        "session": session, "turn": n, "episode": 1, "prompt_tokens": 100,
        "full_history_tokens": 200, "window_exchanges": 1, "pending_exchanges": 0,
        "summary_tokens": 0, "fold_calls": 0, "reset": False, "reset_reason": None,
        "model_called": True,
    }  # fmt: skip
    return TurnReport(**(fields | kw))


def test_the_printed_table_adds_up_without_probes_or_reverted_resets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each session's row counts what the totals count: no probe, no reverted reset."""
    report = Report("test", {})
    report.turns = [
        _turn("a", 1),
        _turn("a", 2, reset=True, reset_reason="new_subject"),
        _turn("a", 3, reset_reverted=True, reset_revert_reason="shared_facts"),
        _turn("a", 4, prompt_tokens=900, probe=True),
        _turn("b", 1, reset=True, reset_reason="new_subject"),
    ]
    assert report.totals("a") | {"fold_input_tokens": 0, "fold_output_tokens": 0} == {
        "turns": 3, "prompt_tokens": 300, "full_history_tokens": 600, "ratio": 0.5,
        "fold_calls": 0, "fold_input_tokens": 0, "fold_output_tokens": 0, "resets": 0,
        "resets_reverted": 1, "recall_tokens": 0,
    }  # fmt: skip
    assert (report.totals()["turns"], report.totals()["resets"]) == (4, 1)
    args = argparse.Namespace(transcript=Path("t.jsonl"), out=None, contexts=None, chart=None)
    _print_summary(report, args)
    rows = {
        cells[0]: cells[1:]
        for line in capsys.readouterr().out.splitlines()
        if len(cells := [c.strip() for c in line.split("│")[1:-1]]) == 8
    }
    assert rows["a"] == ["3", "300", "600", "0.500", "0", "0", "1"]
    assert rows["b"] == ["1", "100", "200", "0.500", "0", "1", "0"]
    assert rows["all"] == ["4", "400", "800", "0.500", "0", "1", "1"]
