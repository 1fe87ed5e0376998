"""`ventana replay`: the report adds up, full history is honest, contexts are the requests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.ops.chart import ChartError, write_chart
from bot.ops.replay import TranscriptError, read_transcript, run_replay, write_outputs
from config.settings import Settings
from memory.store.sqlite.store import SQLiteStore
from memory.tokens import count_messages, default_tokenizer
from providers.base import Message
from tests.bot.ops.conftest import conversation, interleave, recording_model, write_transcript


async def test_totals_are_the_sums_of_the_turns(tmp_path: Path, settings: Settings) -> None:
    """Totals equal the sums over the turns; the ratio is prompt over full history."""
    lines = interleave(
        conversation("a", "AAA", 9, scripted=True), conversation("b", "BBB", 7, scripted=False)
    )
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    data = report.as_json()
    turns, totals = data["turns"], data["totals"]
    assert len(turns) == 16
    for name in ("prompt_tokens", "full_history_tokens", "fold_calls"):
        assert totals[name] == sum(t[name] for t in turns)
    assert totals["resets"] == sum(1 for t in turns if t["reset"])
    assert totals["ratio"] == round(totals["prompt_tokens"] / totals["full_history_tokens"], 4)
    assert totals["fold_calls"] > 0
    assert totals["fold_input_tokens"] > 0
    assert all(t["window_exchanges"] <= settings.window_exchanges for t in turns)
    assert data["tokenizer"] == default_tokenizer().name
    assert data["settings"]["window_exchanges"] == settings.window_exchanges


async def test_full_history_counts_every_earlier_message(
    tmp_path: Path, settings: Settings
) -> None:
    """full_history_tokens = system prompt + every earlier message of the session + the new
    one, recomputed here with the tokenizer; it grows turn by turn."""
    lines = interleave(
        conversation("a", "AAA", 8, scripted=True), conversation("b", "BBB", 5, scripted=True)
    )
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    tokenizer, system = default_tokenizer(), settings.resolved_system_prompt()
    for session in ("a", "b"):
        history: list[Message] = []
        mine = [t for t in report.turns if t.session == session]
        for turn, (user, reply) in zip(mine, _pairs(lines, session), strict=True):
            history.append(Message("user", user))
            assert turn.full_history_tokens == count_messages(tokenizer, system, history)
            history.append(Message("assistant", reply))
        full = [t.full_history_tokens for t in mine]
        assert full == sorted(full)
        assert len(set(full)) == len(full)
        assert [t.turn for t in mine] == list(range(1, len(mine) + 1))


def _pairs(lines: list[dict[str, str]], session: str) -> list[tuple[str, str]]:
    own = [x for x in lines if x["session"] == session]
    return [(own[i]["content"], own[i + 1]["content"]) for i in range(0, len(own), 2)]


async def test_contexts_are_what_the_model_received(tmp_path: Path, settings: Settings) -> None:
    """Each --contexts line equals the request the (recording) chat model got, in order."""
    lines = interleave(
        conversation("a", "AAA", 8, scripted=False), conversation("b", "BBB", 6, scripted=False)
    )
    model = recording_model()
    report = await run_replay(
        write_transcript(tmp_path / "t.jsonl", lines), settings, chat_model=model
    )
    out, ctx = tmp_path / "report.json", tmp_path / "contexts.jsonl"
    write_outputs(report, out, ctx)
    written = [json.loads(x) for x in ctx.read_text("utf-8").splitlines()]
    assert len(written) == len(model.requests) == 14
    for line, request in zip(written, model.requests, strict=True):
        assert line["system"] == request.system
        assert line["messages"] == [
            {"role": m.role, "content": m.content} for m in request.messages
        ]
        assert line["messages"][-1]["role"] == "user"
    tokenizer = default_tokenizer()
    for turn, request in zip(report.turns, model.requests, strict=True):
        assert turn.prompt_tokens == count_messages(tokenizer, request.system, request.messages)
    assert json.loads(out.read_text("utf-8"))["totals"]["prompt_tokens"] == sum(
        t.prompt_tokens for t in report.turns
    )


async def test_scripted_replies_are_used(tmp_path: Path, settings: Settings) -> None:
    """Assistant lines answer their turn; the configured model is asked only otherwise."""
    lines = conversation("a", "AAA", 3, scripted=True) + conversation(
        "a", "ZZZ", 1, scripted=False
    )
    model = recording_model()
    report = await run_replay(
        write_transcript(tmp_path / "t.jsonl", lines), settings, chat_model=model
    )
    assert len(model.requests) == 1
    last = report.contexts[-1]["messages"]
    assert last[-2] == {"role": "assistant", "content": "Respuesta 3: anotado AAA-3 (3,50 €)."}


async def test_interleaved_sessions_never_mix(tmp_path: Path, settings: Settings) -> None:
    """No request of one session carries anything of the other."""
    lines = interleave(
        conversation("a", "AAA", 10, scripted=True), conversation("b", "BBB", 10, scripted=True)
    )
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    for ctx in report.contexts:
        text = json.dumps(ctx, ensure_ascii=False)
        other = "BBB" if ctx["session"] == "a" else "AAA"
        assert other not in text
    assert {t.session for t in report.turns} == {"a", "b"}


async def test_commands_and_debug_turns_still_report(tmp_path: Path, settings: Settings) -> None:
    """Turns without a model call (commands, debug) have prompt_tokens 0 and a context line
    that ends with the user message; /reset counts as a manual reset."""
    lines = [
        {"role": "user", "content": t}
        for t in ("hola", "/reset", "otra cosa", "/debug on", "¿qué enviarías?")
    ]
    model = recording_model()
    report = await run_replay(
        write_transcript(tmp_path / "t.jsonl", lines), settings, chat_model=model
    )
    assert [t.model_called for t in report.turns] == [True, False, True, False, False]
    assert [t.prompt_tokens > 0 for t in report.turns] == [True, False, True, False, False]
    assert [t.reset for t in report.turns] == [False, True, False, False, False]
    assert report.turns[1].reset_reason == "manual"
    assert [t.episode for t in report.turns] == [1, 2, 2, 2, 2]
    assert all(c["messages"][-1]["role"] == "user" for c in report.contexts)
    assert len(model.requests) == 2


def test_transcript_errors_name_the_line(tmp_path: Path) -> None:
    """A malformed line is reported with its number."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"role": "user", "content": "hola"}\n{"role": "robot"}\n', "utf-8")
    with pytest.raises(TranscriptError, match="line 2"):
        read_transcript(path)


def test_assistant_line_answers_its_own_session(tmp_path: Path) -> None:
    """An assistant line is the reply to its session's latest user line, even interleaved."""
    path = write_transcript(
        tmp_path / "t.jsonl",
        [
            {"role": "user", "content": "a1", "session": "a"},
            {"role": "user", "content": "b1", "session": "b"},
            {"role": "assistant", "content": "to a1", "session": "a"},
        ],
    )
    turns = read_transcript(path)
    assert [(t.session, t.text, t.reply) for t in turns] == [
        ("a", "a1", "to a1"),
        ("b", "b1", None),
    ]


async def test_chart_html_has_an_svg_per_session(tmp_path: Path, settings: Settings) -> None:
    """The HTML chart is one self-contained page with an inline SVG per session."""
    lines = interleave(
        conversation("a", "AAA", 9, scripted=True), conversation("b", "BBB", 4, scripted=True)
    )
    report = await run_replay(write_transcript(tmp_path / "t.jsonl", lines), settings)
    path = tmp_path / "chart.html"
    write_chart(report.as_json(), path)
    page = path.read_text("utf-8")
    assert page.count("<svg") == 2
    assert "fold-in" in page
    assert "full history" in page
    assert "<script" not in page
    svg = tmp_path / "chart.svg"
    write_chart(report.as_json(), svg)
    assert svg.read_text("utf-8").startswith("<svg")


def test_chart_rejects_unknown_formats(tmp_path: Path) -> None:
    """Only .html and .png charts exist; .png says how to get matplotlib when missing."""
    with pytest.raises(ChartError, match=r"\.html, \.svg or \.png"):
        write_chart({"turns": []}, tmp_path / "chart.gif")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(ChartError, match="pip install matplotlib"):
            write_chart({"turns": []}, tmp_path / "chart.png")


async def test_a_reset_in_a_dated_transcript_opens_its_episode_at_transcript_time(
    tmp_path: Path, settings: Settings
) -> None:
    """A `/reset` in a transcript dated 2030 opens its episode in 2030, not at today's
    time: the whole app (episodes included) runs on the transcript's clock."""
    lines = [
        {"role": "user", "content": text, "ts": f"2030-05-0{day}T10:00:00+00:00"}
        for day, text in ((1, "hola"), (2, "/reset"), (3, "otra cosa"))
    ]
    db = tmp_path / "replay.db"
    report = await run_replay(
        write_transcript(tmp_path / "t.jsonl", lines), settings, chat_model=recording_model(),
        db=db,
    )  # fmt: skip
    assert [t.reset for t in report.turns] == [False, True, False]
    store = await SQLiteStore.open(db)
    try:
        episodes = await store.episodes("console:default")
    finally:
        await store.close()
    assert [e.started_at.year for e in episodes] == [2030, 2030]
    assert episodes[1].started_at == datetime(2030, 5, 2, 10, 0, tzinfo=UTC)
    assert episodes[0].closed_at == episodes[1].started_at
