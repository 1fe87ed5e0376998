"""What an automatic reset keeps of the closed case (`memory.soft_reset.case`), and the
form the stores keep it in (`memory.store.codec`)."""

from __future__ import annotations

import pytest

from memory.soft_reset.case import MAX_FACTS, last_question, mentioned, previous_case
from memory.store import codec
from memory.types import Exchange, PreviousCase
from tests.memory.soft_reset.test_revert import OLD


def test_the_case_keeps_every_kind_of_fact_from_both_sides() -> None:
    """Ticket, IP and name server, whoever said them; the user's own terms; the question."""
    case = previous_case(1, OLD, OLD[-1].reply_text)
    values = [value for _, value in case.facts]
    assert "#4821" in values
    assert "192.168.1.1" in values
    assert "ns1.example.net" in values
    assert {"rout", "fibr", "4821"} <= set(case.terms)  # stems and hard terms
    assert case.question == "¿Las luces del router están en verde o en rojo?"
    assert case.episode_id == 1


def test_the_facts_are_bounded_most_valuable_and_latest_first() -> None:
    """A long case keeps `MAX_FACTS` facts: identifiers before times, newest first."""
    long = [
        Exchange(i, 1, f"El pedido #{1000 + i} a las 10:{i % 60:02d}", "ok") for i in range(60)
    ]
    facts = previous_case(1, long, "ok").facts
    assert len(facts) == MAX_FACTS
    assert facts[0] == ("id", "#1059")
    assert all(kind == "id" for kind, _ in facts)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Entiendo. ¿Ha reiniciado el router?", "¿Ha reiniciado el router?"),
        ("Could you send the tracking number?", "Could you send the tracking number?"),
        ("Hecho. ¿Algo más? ¿O lo cerramos?", "¿Algo más? ¿O lo cerramos?"),
        ("¿Le llegó? Ya está enviado.", ""),
        ("", ""),
    ],
)
def test_the_last_question_is_the_one_the_reply_ends_with(reply: str, question: str) -> None:
    """Only a reply that ends asking leaves a question to answer."""
    assert last_question(reply) == question


def test_mentioned_finds_values_and_digit_runs() -> None:
    """The value as written (spaces and case aside) or a one-word value's digit run."""
    facts = (("id", "order-731"), ("phone", "612 345 678"), ("ip", "10.0.0.5"))
    assert mentioned(facts, "el pedido 731 no llega") == ("order-731",)
    assert mentioned(facts, "llamadme al 612345678") == ("612 345 678",)
    assert mentioned(facts, "la ip 10.0.0.5 responde") == ("10.0.0.5",)
    assert mentioned(facts, "el 345 de la calle") == ()
    assert mentioned((), "order-731") == ()


def test_the_codec_round_trips() -> None:
    """What a store writes comes back the same; nothing stored is None."""
    case = PreviousCase(7, (("id", "#1"), ("ip", "10.0.0.5")), ("router", "1"), "¿Y?")
    assert codec.decode(codec.encode(case)) == case
    worded = PreviousCase(7, case.facts, case.terms, "", ("- Usuario dijo: «ticket #1»", ""))
    assert codec.decode(codec.encode(worded)) == worded
    assert codec.encode(None) is None
    assert codec.decode(None) is None


def test_a_case_kept_before_words_reads_with_none() -> None:
    """A row written by an earlier release (no "words") decodes, its facts bare."""
    old = '{"episode": 3, "facts": [["id", "#1"]], "terms": ["router"], "question": ""}'
    assert codec.decode(old) == PreviousCase(3, (("id", "#1"),), ("router",), "", ())


def test_each_fact_keeps_the_words_it_was_given_in_the_chat_language() -> None:
    """The user's words quoted under the language's label, aligned with the facts."""
    case = previous_case(1, OLD, OLD[-1].reply_text, "en")
    assert len(case.words) == len(case.facts)
    words = dict(zip((value for _, value in case.facts), case.words, strict=True))
    assert words["#4821"] == "- User said: “Ticket #4821”"
    assert previous_case(1, OLD, OLD[-1].reply_text).words[0].startswith("- Usuario dijo: «")
