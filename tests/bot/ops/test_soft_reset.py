"""The soft reset as operators see it: the replay report (`reset_reverted`, standing
resets in the totals, the planted facts in the last request), `inspect` and the debug
view."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from bot.conversation.debug_view import render_debug
from bot.ops.inspect_view import collect, render
from bot.ops.replay import run_replay, write_outputs
from memory.store.sqlite.store import SQLiteStore
from tests.bot.ops import long_case
from tests.bot.ops.conftest import make_settings, write_transcript
from tests.memory import test_carry_over as carry


async def replay(tmp_path: Path, lines: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
    """The report of `lines` (heuristic topics, idle reset after 8 hours), with each
    turn's request as `context`."""
    values = {"topic_detection": "heuristic", "idle_reset_hours": 8} | settings
    report = await run_replay(
        write_transcript(tmp_path / "t.jsonl", lines), make_settings(tmp_path, **values)
    )
    write_outputs(report, tmp_path / "r.json", tmp_path / "c.jsonl")
    data: dict[str, Any] = json.loads((tmp_path / "r.json").read_text("utf-8"))
    contexts = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text("utf-8").splitlines()]
    for turn, context in zip(data["turns"], contexts, strict=True):
        turn["context"] = (
            context["system"] + "\n" + "\n".join(m["content"] for m in context["messages"])
        )
    return data


async def test_a_long_case_with_false_resets_keeps_every_planted_fact(tmp_path: Path) -> None:
    """One long case, an overnight silence (an idle reset) and the next message about the
    same server: the reset reverts, none stands, and every planted fact of the case is in
    the last request."""
    data = await replay(tmp_path, long_case.lines())
    turns, totals = data["turns"], data["totals"]
    reverted = [t for t in turns if t["reset_reverted"]]
    assert reverted
    assert reverted[0]["reset_revert_reason"] == "shared_facts"
    assert not reverted[0]["reset"]
    assert totals["resets_reverted"] == len(reverted)
    assert totals["resets"] == sum(t["reset"] for t in turns) - len(reverted) == 0
    last = turns[-1]["context"]
    assert [fact for fact in long_case.PLANTED if fact not in last] == []
    assert all("reset_revert_reason" in t for t in turns)  # every turn has the fields


async def test_a_probe_that_would_revert_says_so_and_changes_nothing(tmp_path: Path) -> None:
    """A probe right after the false reset, naming the case's ticket: reported with
    `reset_reverted`, its request holding the case; the next real turn reverts alike."""
    lines = long_case.lines()
    at = 2 * len(long_case.DAY_ONE) + 2  # after the overnight message and its reply
    probe = {"role": "user", "content": "¿Y el ticket #48213?", "probe": True}
    data = await replay(tmp_path, [*lines[:at], probe, *lines[at:]])
    probed = next(t for t in data["turns"] if t["probe"])
    assert probed["reset_reverted"]
    assert probed["reset_revert_reason"] == "shared_facts"
    assert "ns1.hostingbueno.es" in probed["context"]
    real = [t for t in data["turns"] if not t["probe"]]
    assert real[len(long_case.DAY_ONE) + 1]["reset_reverted"]
    assert data["totals"]["resets"] == 0


def real_switch() -> list[dict[str, Any]]:
    """The long case's first day, then the next morning a different subject only."""
    case = long_case.lines()[: 2 * len(long_case.DAY_ONE)]
    other = [
        "Buenas, quería preguntar por las tarifas de móvil para empresas.",
        "¿Cuántas líneas entran en la tarifa básica?",
        "¿Y las llamadas internacionales van aparte?",
        "¿Puedo portar los números de mis empleados?",
        "¿Cuánto tarda la portabilidad?",
        "¿Hay permanencia?",
        "¿Me mandáis la oferta por escrito?",
    ]
    later = [
        {"role": "user", "content": text, "ts": f"2026-03-05T10:{2 * n:02d}:00+00:00"}
        for n, text in enumerate(other)
    ]
    return [*case, *later]


async def test_a_real_switch_stands_and_the_old_facts_leave_the_request(tmp_path: Path) -> None:
    """A new subject after the overnight reset: the reset stands; the old case's facts
    ride with the first messages after it, then are gone from the request."""
    data = await replay(tmp_path, real_switch())
    turns, totals = data["turns"], data["totals"]
    first = len(long_case.DAY_ONE)  # the turn right after the silence
    assert turns[first]["reset"]
    assert turns[first]["reset_reason"] == "idle"
    assert not any(t["reset_reverted"] for t in turns)
    # every reset stands (the model may read day one's new order as one more: it is
    # not this test's subject), and none after the switch
    assert totals["resets"] == sum(t["reset"] for t in turns) >= 1
    assert totals["resets_reverted"] == 0
    assert not any(t["reset"] for t in turns[first + 1 :])
    assert "#48213" in turns[first]["context"]  # the closed case rides at first
    for fact in ("#48213", "203.0.113.45", "ns1.hostingbueno.es", "RR123456789ES"):
        assert fact not in turns[-1]["context"]
    assert "Laura Méndez" in turns[-1]["context"]  # identity carry-over stays


async def test_inspect_and_the_debug_view_show_a_reverted_reset(tmp_path: Path) -> None:
    """After a revert, `inspect` lists it with its reason; a dry run that would revert
    says so in the debug view, which shows the previous case's lines as they are sent."""
    store = await SQLiteStore.open(tmp_path / "v.db")
    try:
        engine = carry.engine_for(store)
        for text in [*carry.OLD, carry.NEW]:
            await carry.turn(engine, text)
        dry = await engine.prepare(carry.KEY, "¿Y el pedido 4471?", dry_run=True)
        view = render_debug(dry, "en")
        assert "RESET REVERTED (shared_facts)" in view
        assert len(await store.episodes(carry.KEY)) == 2  # a dry run reverts nothing
        case_view = render_debug(await engine.prepare(carry.KEY, "Hola", dry_run=True), "en")
        assert "previous case (episode" in case_view
        # the block's lines as sent: each fact in the words the chat gave it
        assert "\nUsuario dijo: «pedido 4471 llegó con la pantalla rota»\n" in case_view
        await carry.turn(engine, "¿Y el pedido 4471?")
        settings = make_settings(tmp_path, window_exchanges=2)
        data = await collect(store, engine, carry.KEY, settings)
        assert data is not None
        (reverted,) = data["resets_reverted"]
        assert reverted["reason"] == "shared_facts"
        assert reverted["shared"] == ["4471"]
        assert data["episodes"][0]["resets_reverted"] == 1
        assert data["episodes"][0]["reopened_at"] is not None
        out = io.StringIO()
        render(data, Console(file=out, width=200))
        assert "resets reverted (1)" in out.getvalue()
    finally:
        await store.close()
