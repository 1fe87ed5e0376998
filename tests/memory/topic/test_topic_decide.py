"""`decide`: the off and llm modes, the LLM verdict, /undo's grace period."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from memory.topic.decide import (
    decide,
    detect_heuristic,
    detect_llm,
    parse_llm_verdict,
)
from memory.types import TopicDecision
from providers.base import Overloaded
from tests.memory.topic.topic_tickets import (
    context,
)
from tests.support.fakes import ScriptedChatModel


def _verdict(same: bool, closed: bool = False, confidence: float = 0.9) -> str:
    return json.dumps(
        {"same_case": same, "case_closed": closed, "confidence": confidence, "reason": "x"}
    )


CLOSED_THEN_BILLING = context(
    "Tengo un cobro duplicado en la factura de julio",
    [("Ya funciona, gracias, eso es todo", "¡Me alegro! Cierro el ticket.")],
    idle=timedelta(days=3),
    idle_reset_hours=48,
)


async def test_off_mode_never_resets() -> None:
    """'off' continues even for a closed case, a billing switch and idle silence."""
    decision = await decide("off", CLOSED_THEN_BILLING, ScriptedChatModel([_verdict(False)]))
    assert decision.action == "continue"


@pytest.mark.parametrize(
    ("text", "action", "reason"),
    [
        (_verdict(False), "reset", "llm_new_subject"),
        (_verdict(False, closed=True), "reset", "case_closed"),
        (_verdict(True), "continue", "llm_same_case"),
        (_verdict(False, confidence=0.6), "continue", "llm_low_confidence"),
        ("```json\n" + _verdict(False) + "\n```", "reset", "llm_new_subject"),
        ("same case, I think", "continue", "llm_malformed"),
        ('{"same_case": "no", "confidence": 0.9}', "continue", "llm_malformed"),
        ('{"same_case": false, "confidence": 1.7}', "continue", "llm_malformed"),
        ('{"same_case": false, "confidence": 0.9', "continue", "llm_malformed"),
        ("", "continue", "llm_malformed"),
    ],
)
async def test_llm_mode_reads_the_verdict(text: str, action: str, reason: str) -> None:
    """A confident 'not the same case' resets; anything else, malformed included, continues."""
    model = ScriptedChatModel([text])
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await decide("llm", ctx, model)
    assert (decision.action, decision.reason) == (action, reason)
    assert decision.signals["mode"] == "llm"
    (request,) = model.requests
    assert request.purpose == "topic"
    assert request.max_tokens <= 200
    assert "Tengo un cobro duplicado" in request.messages[-1].content
    json.dumps(decision.signals)


async def test_llm_mode_provider_error_continues() -> None:
    """A ProviderError from the model continues and names the error kind."""
    model = ScriptedChatModel([Overloaded("busy")])
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await detect_llm(model, ctx)
    assert (decision.action, decision.reason) == ("continue", "llm_error")
    assert decision.signals["llm_error"] == "overloaded"


async def test_llm_mode_idle_is_decided_before_any_call() -> None:
    """Idle silence resets in llm mode without calling the model."""
    model = ScriptedChatModel([_verdict(True)])
    decision = await decide("llm", CLOSED_THEN_BILLING, model)
    assert (decision.action, decision.reason) == ("reset", "idle")
    assert model.requests == []


async def test_llm_mode_without_model_falls_back_to_heuristic() -> None:
    """Asked for llm with no model, decide uses the heuristic and says so."""
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await decide("llm", ctx, None)
    assert decision.signals["mode"] == "heuristic"
    assert decision.signals["llm_unavailable"] is True
    assert decision == TopicDecision(decision.action, decision.reason, decision.signals)
    offline = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == (offline.action, offline.reason)
    assert decision.signals["p"] == offline.signals["p"]


def test_parse_llm_verdict_is_total() -> None:
    """Any text parses to a decision; garbage continues."""
    for text in ("null", "[1, 2]", "{}", '{"same_case": true}', "{{{{"):
        decision = parse_llm_verdict(text)
        assert decision.action == "continue"


# --- the TIAGE bench ----------------------------------------------------------------------


def test_respect_undo_suppresses_resets_for_a_while() -> None:
    """Right after /undo a reset decision becomes 'continue'; later it stands again."""

    from memory.topic.decide import respect_undo
    from memory.types import TopicDecision

    now = datetime(2026, 7, 1, tzinfo=UTC)
    reset = TopicDecision("reset", "intent_changed", {"x": 1})
    kept = respect_undo(reset, now - timedelta(minutes=5), now, within_s=3600)
    assert (kept.action, kept.reason) == ("continue", "after_undo")
    assert kept.signals["suppressed_reset"] == "intent_changed"
    assert respect_undo(reset, now - timedelta(hours=2), now, within_s=3600) == reset
    assert respect_undo(reset, None, now, within_s=3600) == reset
