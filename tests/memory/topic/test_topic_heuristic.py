"""The offline detector (`heuristic` mode, now the learned model): seed 002's signals,
idle, closure, intent, both profiles. Product behaviour: these hold for the detector the
product runs; `test_topic_rules.py` keeps the hand-written baseline arm pinned."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.topic.decide import (
    PROFILES,
    TopicContext,
    detect_heuristic,
    detect_rules,
)
from memory.types import Exchange
from tests.memory.topic.topic_tickets import (
    SUMMARY_EN,
    SUMMARY_ES,
    TICKET_EN,
    TICKET_ES,
    context,
    ticket_contexts,
)


@pytest.mark.parametrize(
    ("turns", "summary", "language"),
    [(TICKET_ES, SUMMARY_ES, "es"), (TICKET_EN, SUMMARY_EN, "en")],
    ids=["es", "en"],
)
def test_technical_ticket_of_40_turns_never_resets(
    turns: list[tuple[str, str]], summary: str, language: str
) -> None:
    """A technical ticket growing for 40 turns stays 'continue' at every turn."""
    assert len(turns) == 40
    resets = [
        (i, ctx.message, d.reason)
        for i, ctx in ticket_contexts(turns, summary, language)
        if (d := detect_heuristic(ctx)).reset
    ]
    assert resets == []


def test_closed_ticket_then_billing_days_later_resets_es() -> None:
    """A ticket closed with 'ya funciona, gracias' and a billing question later → reset."""
    window = [
        *TICKET_ES[-4:-1],
        ("Ya funciona, gracias, eso es todo", "¡Me alegro! Cierro el ticket #4821."),
    ]
    ctx = context(
        "Hola, tengo un cobro duplicado en la factura de julio: me cargaron 49,90 € dos veces",
        window,
        summary=SUMMARY_ES,
        idle=timedelta(days=3),
    )
    decision = detect_heuristic(ctx)
    assert decision.reset
    # named by the feature pushing hardest: the closure, or the new intent after it
    assert decision.reason in ("case_closed", "intent_changed")
    assert decision.signals["closure_cues_last_exchange"]


def test_closed_ticket_then_billing_days_later_resets_en() -> None:
    """'That fixed it, thanks, bye' then an invoice question days later → reset."""
    window = [*TICKET_EN[-3:], ("That fixed it, thanks, bye!", "Glad to help, closing the case.")]
    ctx = context(
        "Hi, I was charged twice for the June invoice, can you refund one payment?",
        window,
        summary=SUMMARY_EN,
        idle=timedelta(days=4),
        language="en",
    )
    decision = detect_heuristic(ctx)
    assert decision.reset
    assert decision.reason in ("case_closed", "intent_changed")


def test_thanks_after_closure_is_not_a_new_subject() -> None:
    """A farewell right after the case closed continues: no new subject began."""
    window = [("Ya funciona, gracias", "¡Genial! ¿Algo más?")]
    decision = detect_heuristic(context("No, nada más. ¡Muchas gracias!", window))
    assert decision.action == "continue"


def test_intent_switch_tech_to_billing_resets() -> None:
    """Mid-ticket, a billing question (no closure) resets with 'intent_changed'."""
    ctx = context(
        "Otra consulta aparte: ¿por qué me cobraron dos veces la factura de marzo?",
        TICKET_ES[20:26],
        summary=SUMMARY_ES,
    )
    decision = detect_heuristic(ctx)
    assert decision.reset
    assert decision.reason in {"intent_changed", "new_subject"}
    assert decision.signals["message_intent"] == "billing"
    assert decision.signals["episode_intent"] == "technical"


def test_intent_switch_purchase_to_complaint_resets() -> None:
    """Chat profile: after comparing financing for a car, a warranty complaint resets."""
    window = [
        (
            "What financing plans do you offer for the Corolla Hybrid?",
            "We have 36 and 60 month plans; the 60 month one has a 4.9% rate.",
        ),
        (
            "What would the monthly price be with a 5,000 down payment on 60 months?",
            "About 410 per month, insurance not included.",
        ),
        (
            "Is there a discount if I buy this month?",
            "Yes, a 1,000 discount on stock units until the 31st.",
        ),
        ("Can I reserve the grey one in stock?", "Sure, a 200 deposit reserves it for 7 days."),
    ]
    ctx = context(
        "The gearbox is broken and grinding, I want to file a warranty complaint",
        window,
        language="en",
    )
    decision = detect_heuristic(ctx, "chat")
    assert (decision.action, decision.reason) == ("reset", "intent_changed")


def test_same_intent_follow_up_with_new_words_continues() -> None:
    """A follow-up in the ticket's own intent family is the same case even with new words."""
    ctx = context(
        "¿Puede ser que el router de la oficina bloquee el puerto 80?",
        TICKET_ES[24:30],
        summary=SUMMARY_ES,
    )
    assert detect_heuristic(ctx).action == "continue"


# topic-v1 missed the two switches below (a new-request cue plus a subject the episode
# never mentioned: only the rules arm reset them); topic-v2, fitted on more support
# sessions with the `opening` feature and its products, catches both, and on the blind
# varied set holds precision 0.93 at recall 0.41 where topic-v1 had 0.92 at 0.18
# (docs/benchmarks.md). Both arms agree on them now.
BY_THE_WAY_RULES_RESET = "rules arm resets it (test_topic_rules.py)"


def test_new_request_cue_with_a_new_subject_resets() -> None:
    """Chat profile: 'by the way' plus a subject the episode never mentioned."""
    ctx = context(
        "By the way, do you ship printed manuals to Canada?",
        TICKET_EN[30:34],
        language="en",
    )
    decision = detect_heuristic(ctx, "chat")
    assert decision.reset
    assert decision.signals["p"] >= decision.signals["threshold"]
    assert detect_rules(ctx, PROFILES["chat"]).reset, BY_THE_WAY_RULES_RESET


def test_new_request_cue_about_the_same_case_continues() -> None:
    """'Otra cosa' about the same error is not a new subject."""
    ctx = context("Otra cosa: el error NXDOMAIN sigue en el móvil", TICKET_ES[8:12])
    assert detect_heuristic(ctx).action == "continue"


def test_idle_silence_resets() -> None:
    """More silence than idle_reset_hours resets with 'idle', whatever the message."""
    ctx = context("Sigue fallando", TICKET_ES[:3], idle=timedelta(hours=30), idle_reset_hours=24)
    decision = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == ("reset", "idle")
    assert decision.signals["idle_hours"] == 30.0


@pytest.mark.parametrize(
    ("idle", "hours"), [(timedelta(hours=2), 24), (timedelta(days=90), 0), (None, 24)]
)
def test_no_idle_reset_below_limit_or_when_disabled(idle: timedelta | None, hours: float) -> None:
    """Short silence, idle_reset_hours 0 or no earlier message never trigger the idle reset."""
    ctx = context("Sigue fallando", TICKET_ES[:3], idle=idle, idle_reset_hours=hours)
    assert detect_heuristic(ctx).reason != "idle"


def test_empty_episode_never_resets() -> None:
    """Nothing in the window and no summary: nothing to reset, even after long silence."""
    ctx = context("Quiero pagar mi factura", idle=timedelta(days=9), idle_reset_hours=1)
    assert detect_heuristic(ctx).action == "continue"


@pytest.mark.parametrize(
    "greeting", ["Buenas", "hi there!", "Hola!!", "hello?", "Buenos días", "good evening"]
)
def test_a_greeting_alone_is_an_empty_episode(greeting: str) -> None:
    """The user has said no word of content yet: the problem that follows opens the case
    (no reset in the support profile); an idle silence still resets first."""
    ctx = context(
        "Tengo un problema con un pedido que no llega",
        [(greeting, "¡Hola! ¿En qué puedo ayudarte con tu pedido o tu factura?")],
        idle=timedelta(hours=2),
    )
    decision = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == ("continue", "empty_episode")
    said = context("Tengo un problema con un pedido", [("Hola, la factura", "¿Cuál?")])
    assert detect_heuristic(said).reason != "empty_episode"


@given(rounds=st.integers(min_value=0, max_value=50))
def test_summary_rounds_alone_never_reset(rounds: int) -> None:
    """Many summary rounds are reported, but a same-case message still continues."""
    for i in (10, 20, 35):
        ctx = context(TICKET_ES[i][0], TICKET_ES[i - 6 : i], summary=SUMMARY_ES, rounds=rounds)
        decision = detect_heuristic(ctx)
        assert decision.action == "continue"
        assert decision.signals["summary_rounds_high"] is (rounds >= 2)


def test_summary_rounds_lower_the_bar_with_another_signal() -> None:
    """Chat profile: with many rounds, next to a new-request cue the bar is lower."""
    message = "By the way, can you recommend a laptop for video editing?"
    ctx = context(message, TICKET_EN[30:34], summary=SUMMARY_EN, language="en")
    low = detect_heuristic(ctx, "chat")
    high = detect_heuristic(replace(ctx, summary_rounds=3), "chat")
    assert high.signals["threshold"] < low.signals["threshold"]
    assert high.signals["p"] == low.signals["p"]  # only the bar moves
    # Without a cue the rounds move nothing: drift alone never lowers the bar.
    plain = context("Can you recommend a laptop for video editing?", TICKET_EN[30:34])
    plain = replace(plain, summary=SUMMARY_EN, language="en")
    plain_low = detect_heuristic(plain, "chat")
    plain_high = detect_heuristic(replace(plain, summary_rounds=3), "chat")
    assert plain_high.signals["threshold"] == plain_low.signals["threshold"]


def test_signals_are_json_serialisable() -> None:
    """Every decision's signals survive json.dumps (they are stored with the turn)."""
    for _, ctx in ticket_contexts(TICKET_EN, SUMMARY_EN, "en"):
        json.dumps(detect_heuristic(ctx).signals)


# --- modes and the LLM verdict ------------------------------------------------------------


FOLLOW_UPS = [
    (
        "Hello, my order #A-5521 arrived damaged on July 14.",
        "Sorry to hear that. I see order #A-5521; can you describe the damage?",
    ),
    (
        "The box was crushed and the lamp base is cracked.",
        "Thanks. I can offer a replacement or a refund of $84.90. Which do you prefer?",
    ),
    (
        "A replacement, please. Ship it to the same address.",
        "Done: replacement for #A-5521 ships within 3 business days.",
    ),
    ("Will I need to return the broken one?", "No, you can keep or recycle it."),
    (
        "Great. Can you email me the confirmation at sam@example.org?",
        "Sent to sam@example.org. Anything else?",
    ),
    ("What's the tracking number?", "It will be TRK-99-1204 once the courier scans it."),
]


def test_support_profile_keeps_follow_up_questions_in_the_case() -> None:
    """Support follow-ups full of new words never reset under the support profile."""
    now = datetime(2026, 7, 17, tzinfo=UTC)
    for i in range(1, len(FOLLOW_UPS)):
        window = tuple(
            Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[max(0, i - 2) : i])
        )
        ctx = TopicContext(FOLLOW_UPS[i][0], window, "", now, now, 0, 0, "en")
        assert not detect_heuristic(ctx, "support").reset, FOLLOW_UPS[i][0]


def test_support_profile_explicit_new_request_with_a_new_subject_resets() -> None:
    """Support profile: a new-request cue with a new subject (the cue is in the signals)."""
    now = datetime(2026, 7, 17, tzinfo=UTC)
    window = tuple(Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[-3:]))
    message = "By the way, a different question: can I change the password of my account?"
    ctx = TopicContext(message, window, "", now, now, 0, 0, "en")
    decision = detect_heuristic(ctx, "support")
    assert decision.reset
    assert decision.signals["new_request_cues"]
    assert detect_rules(ctx, PROFILES["support"]).reset, BY_THE_WAY_RULES_RESET


@pytest.mark.parametrize(
    ("text", "announces_new_subject"),
    [
        ("¿Qué otra cosa puedo probar?", False),
        ("¿Hay alguna otra cosa que pueda hacer?", False),
        ("Is there anything else I can try?", False),
        ("Can I try something else?", False),
        ("Otra cosa: ¿cómo cambio mi contraseña?", True),
        ("Por cierto, ¿la base se puede devolver?", True),
        ("Something else: my invoice is wrong", True),
    ],
)
def test_asking_for_an_alternative_is_not_a_new_request(
    text: str, announces_new_subject: bool
) -> None:
    """'¿Qué otra cosa puedo probar?' asks for another step of the same case."""
    from memory.topic.cues import NEW_REQUEST
    from memory.topic.text import new_request_hits

    assert bool(new_request_hits(text, NEW_REQUEST)) is announces_new_subject
