"""When the previous case rides with a message, and its block (`memory.soft_reset.block`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.blocks import CASE_TAG
from memory.soft_reset.block import SOFT_MESSAGES, case_block, in_play
from memory.soft_reset.case import previous_case
from memory.types import Exchange, PreviousCase
from tests.memory.soft_reset.test_revert import CASE, FIRST

LATER = SOFT_MESSAGES + 1


@pytest.mark.parametrize(
    ("message", "window", "since", "expected"),
    [
        ("¿Abrís el domingo?", [FIRST], 1, "recent"),
        ("¿Abrís el domingo?", [FIRST], LATER, None),
        ("¿Y el ticket #4821?", [FIRST], LATER, "shared_facts"),
        ("Gracias", [Exchange(5, 2, "Lo de 192.168.1.1", "ok"), FIRST], LATER, "shared_facts"),
        (
            "Gracias",
            [Exchange(5, 2, "Cerrado", "Cierro el ticket #4821"), FIRST],
            LATER,
            "shared_facts",
        ),
        ("Gracias", [Exchange(5, 2, "Cerrado", "Cierro el ticket"), FIRST], LATER, None),
        ("La fibra del router otra vez", [FIRST], LATER, "shared_terms"),
        ("El router de la tienda", [Exchange(5, 2, "El router de la tienda", "ok")], LATER, None),
    ],
)
def test_the_case_is_in_play_while_recent_or_referred_to(
    message: str, window: list[Exchange], since: int, expected: str | None
) -> None:
    """Recent, or the message or an exchange of the window (either side) names a fact, or
    the message shares terms of the case that the new episode has not used itself."""
    assert in_play(CASE, message, window, since) == expected


def test_no_previous_case_nothing_in_play() -> None:
    """A first episode, a manual reset, an undone one: nothing rides."""
    assert in_play(None, "¿Y el ticket #4821?", [], 0) is None


def test_the_block_is_labelled_and_bounded() -> None:
    """Its label says where the facts come from and that they may be unrelated; it
    fits its cap by leaving the last (least valuable) facts out."""
    words = lambda text: len(text.split())  # noqa: E731
    case = replace(CASE, words=())  # each fact as "- kind: value"
    block = case_block(case, "en", words, 1000)
    assert block.startswith(f"<{CASE_TAG}>\nfacts of this user's previous case")
    assert "may be unrelated" in block
    assert "- id: #4821" in block
    cap = words(block) - 1
    small = case_block(case, "en", words, cap)
    assert 0 < words(small) <= cap
    assert small.count("\n- ") == block.count("\n- ") - 1
    assert "ns1.example.net" not in small  # the last fact went first
    assert case_block(case, "es", words, 5) == ""


def test_the_block_names_each_fact_in_the_chat_language() -> None:
    """A Spanish block says "importe" and "fecha", an English one "amount" and "date"."""
    case = PreviousCase(
        7, (("amount", "45 €"), ("date", "14/03"), ("named", "Cocinas Robledal")), (), ""
    )
    words = lambda text: len(text.split())  # noqa: E731
    es, en = case_block(case, "es", words, 1000), case_block(case, "en", words, 1000)
    assert "- importe: 45 €\n- fecha: 14/03\n- nombre: Cocinas Robledal" in es
    assert "- amount: 45 €\n- date: 14/03\n- name: Cocinas Robledal" in en


def test_each_fact_rides_in_the_words_the_chat_gave_it() -> None:
    """What the user said is quoted and labelled, the bot's words go as they are; a fact
    given bare ("192.168.1.1") keeps its kind's label, and words another line says whole
    get no line of their own ("PST desde Seattle", "Seattle"'s)."""
    old = [
        Exchange(1, 1, "Mi vuelo sale a las 09:40 PST desde Seattle, reserva QW8ZTP", "Anotado."),
        Exchange(2, 1, "192.168.1.1", "Le devolvemos 45 € por el retraso del vuelo."),
    ]
    case = previous_case(1, old, "Anotado.", "es")
    block = case_block(case, "es", lambda text: len(text.split()), 1000)
    assert "- Usuario dijo: «sale a las 09:40 PST desde Seattle»" in block
    assert "- Usuario dijo: «reserva QW8ZTP»" in block
    assert "- IP: 192.168.1.1" in block
    assert "- devolvemos 45 € por el retraso" in block
    assert block.count("09:40") == block.count("Seattle") == 1


def test_over_its_cap_the_least_valuable_facts_lose_their_words_first() -> None:
    """A cap that holds every fact bare but not every fact in words keeps every fact:
    the last ones are written bare before any is left out."""
    old = [
        Exchange(n, 1, f"El pedido #{4400 + n} llegó roto por la esquina izquierda", "Vaya.")
        for n in range(1, 6)
    ]
    case = previous_case(1, old, "Vaya.", "es")
    words = lambda text: len(text.split())  # noqa: E731
    bare = case_block(replace(case, words=()), "es", words, 1000)
    full = case_block(case, "es", words, 1000)
    assert words(bare) < words(full)
    extra = words(case.words[0]) - words("- ref: #4405")  # one fact's words
    squeezed = case_block(case, "es", words, words(bare) + extra)
    assert all(f"#{4400 + n}" in squeezed for n in range(1, 6))
    assert "- Usuario dijo: «pedido #4405 llegó roto por la esquina»" in squeezed  # latest
    assert "- ref: #4404" in squeezed  # older, bare
    assert squeezed.count("Usuario dijo") == 1
