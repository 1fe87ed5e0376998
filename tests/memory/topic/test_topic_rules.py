"""The hand-written rules, kept as the benches' baseline arm (`detect_rules`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.topic.decide import (
    DEFAULT_TUNING,
    SUPPORT_TUNING,
    TopicContext,
    detect_rules,
)
from memory.types import Exchange
from tests.memory.topic.test_topic_heuristic import FOLLOW_UPS
from tests.memory.topic.topic_tickets import (
    SUMMARY_EN,
    SUMMARY_ES,
    TICKET_EN,
    TICKET_ES,
    context,
    ticket_contexts,
)

NOW = datetime(2026, 7, 17, tzinfo=UTC)


def test_rules_keep_a_long_ticket_in_one_episode() -> None:
    """The chat rules never reset the 40-turn ES/EN tickets."""
    for turns, summary, language in ((TICKET_ES, SUMMARY_ES, "es"), (TICKET_EN, SUMMARY_EN, "en")):
        contexts = ticket_contexts(turns, summary, language)
        assert not any(detect_rules(ctx, DEFAULT_TUNING).reset for _, ctx in contexts)


def test_rules_reset_a_closed_case_with_their_reason_and_score() -> None:
    """'Ya funciona, gracias, eso es todo' then billing: case_closed, with score/threshold."""
    window = [*TICKET_ES[-4:-1], ("Ya funciona, gracias, eso es todo", "Cierro el ticket.")]
    message = "Hola, tengo un cobro duplicado en la factura de julio: 49,90 € dos veces"
    ctx = context(message, window, summary=SUMMARY_ES, idle=timedelta(days=3))
    decision = detect_rules(ctx, DEFAULT_TUNING)
    assert (decision.action, decision.reason) == ("reset", "case_closed")
    assert {"score", "threshold"} <= set(decision.signals)


def test_support_rules_keep_follow_ups_and_reset_an_explicit_change() -> None:
    """Support rules: follow-ups with new words continue; 'a different question' resets."""
    for i in range(1, len(FOLLOW_UPS)):
        window = tuple(
            Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[max(0, i - 2) : i])
        )
        ctx = TopicContext(FOLLOW_UPS[i][0], window, "", NOW, NOW, 0, 0, "en")
        assert not detect_rules(ctx, SUPPORT_TUNING).reset, FOLLOW_UPS[i][0]
    window = tuple(Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[-3:]))
    message = "By the way, a different question: can I change the password of my account?"
    ctx = TopicContext(message, window, "", NOW, NOW, 0, 0, "en")
    assert detect_rules(ctx, SUPPORT_TUNING).reset


def test_rules_reset_on_a_new_request_with_a_new_subject_in_chat() -> None:
    """Chat rules: 'by the way' plus a subject never mentioned resets."""
    ctx = context("By the way, do you ship printed manuals to Canada?", TICKET_EN[30:34])
    assert detect_rules(ctx, DEFAULT_TUNING).reset
