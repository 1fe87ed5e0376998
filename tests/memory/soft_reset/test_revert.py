"""The revert rule (`memory.soft_reset.revert`), table-driven: which message after an
automatic reset takes it back, and why; which leaves it standing."""

from __future__ import annotations

import pytest

from memory.soft_reset.case import previous_case
from memory.soft_reset.revert import REVERT_WITHIN, RevertCheck, decide_revert
from memory.types import Exchange, PreviousCase

OLD = [
    Exchange(
        1,
        1,
        "Hola, el router no conecta desde la migración de la fibra. Ticket #4821.",
        "Vamos a revisarlo. ¿La IP del router es 192.168.1.1?",
    ),
    Exchange(
        2,
        1,
        "Sí, 192.168.1.1, y los DNS apuntan a ns1.example.net.",
        "Bien. Reinicie el router y cambie los DNS del router.",
    ),
    Exchange(
        3,
        1,
        "Reinicié el router pero la conexión de fibra sigue cayéndose.",
        "Entiendo. ¿Las luces del router están en verde o en rojo?",
    ),
]
CASE = previous_case(1, OLD, OLD[-1].reply_text)
# The message that triggered the (false or real) reset, answered in the new episode.
FIRST = Exchange(4, 2, "Buenos días, ¿a qué hora abre la tienda de Sevilla?", "Abre a las 10.")
STANDS = None
# A false reset on a greeting; the bot, with the old case's facts at hand, asks about it.
HELLO = Exchange(
    4, 2, "Buenos días, aquí estoy otra vez.", "Buenos días. ¿Sigue el router sin conexión?"
)

CASES = [
    # message, the new episode's exchanges, expected reason (None: the reset stands)
    ("El ticket #4821 sigue abierto, ¿alguna novedad?", [FIRST], "shared_facts"),
    ("Os paso la IP otra vez: 192.168.1.1", [FIRST], "shared_facts"),
    ("La conexión de fibra del router se cae cada hora", [FIRST], "shared_terms"),
    ("Las luces están en rojo", [FIRST], "answers_question"),
    ("Sí", [FIRST], "answers_question"),
    # the bot's reply in the new episode talks about the old case: still the old case
    ("Sí, el router sigue sin conexión de fibra", [HELLO], "shared_terms"),
    ("Sigue igual que ayer", [FIRST], "continuation_cue"),
    ("It still fails", [FIRST], "continuation_cue"),
    # a word of the case said as already known
    ("vale, ¿y lo de la fibra cuándo lo miráis?", [FIRST], "continuation_cue"),
    ("ok, and the dns thing?", [FIRST], "continuation_cue"),
    ("¿y lo de la tienda?", [FIRST], STANDS),  # the new episode's own word
    ("¿Y la tienda de Sevilla abre el domingo?", [FIRST], STANDS),
    ("¿Tenéis aparcamiento?", [FIRST], STANDS),
    ("Quiero devolver unas zapatillas del pedido 7781", [FIRST], STANDS),
    ("¿Todavía abre la tienda de Sevilla a las 10?", [FIRST], STANDS),  # a cue, new subject
]


def check(message: str, episode: list[Exchange], **kw: object) -> RevertCheck:
    base: dict[str, object] = {
        "message": message,
        "previous": CASE,
        "opened_by": "auto:intent_changed",
        "episode": tuple(episode),
        "since_reset": len(episode),
    }
    return RevertCheck(**(base | kw))  # type: ignore[arg-type]


@pytest.mark.parametrize(("message", "episode", "expected"), CASES)
def test_the_rule_reverts_what_continues_the_old_case(
    message: str, episode: list[Exchange], expected: str | None
) -> None:
    """Each message right after an automatic reset: the reason it reverts, or None."""
    revert = decide_revert(check(message, episode))
    assert (revert.reason if revert else None) == expected


def test_a_manual_reset_never_reverts() -> None:
    """`/reset` is hard: the strongest continuation does not take it back."""
    assert decide_revert(check("El ticket #4821 sigue igual", [FIRST], opened_by="manual")) is None


def test_a_first_episode_or_a_reset_without_its_case_never_reverts() -> None:
    """Nothing to go back to: no previous case, or the first episode of a key."""
    assert decide_revert(check("El ticket #4821", [FIRST], previous=None)) is None
    assert decide_revert(check("El ticket #4821", [FIRST], opened_by=None)) is None


def test_past_three_messages_only_the_case_s_identifiers_revert() -> None:
    """Past `REVERT_WITHIN` messages of the new episode, shared words, a cue or an answer
    no longer revert; naming the old case's ticket or IP said whole still does, unless
    the message names more identifiers of its own."""
    late = REVERT_WITHIN + 1
    for message in (
        "La conexión de fibra del router se cae cada hora",
        "Sigue igual que ayer",
        "Sí",
        "El 4821 otra vez",  # a digit run, not the ticket said whole
    ):
        assert decide_revert(check(message, [FIRST], since_reset=late)) is None, message
    found = decide_revert(check("El ticket #4821 sigue abierto", [FIRST], since_reset=40))
    assert found is not None
    assert found.reason == "shared_facts"
    assert found.shared == ("#4821",)
    ip = decide_revert(check("Os paso la IP otra vez: 192.168.1.1", [FIRST], since_reset=late))
    assert ip is not None
    own = check("El #4821 se parece al #9120 y al #9121 nuevos", [FIRST], since_reset=late)
    assert decide_revert(own) is None


def test_the_bot_naming_the_closed_case_reverts_at_any_time() -> None:
    """The last reply of the new episode naming the old case's ticket said whole (and
    more of its identifiers than of its own) reverts however late, whatever the user
    says; a digit run, a reply naming new identifiers too, or an older reply does not."""
    named = Exchange(5, 2, "Vale, gracias", "De nada. Dejo el ticket #4821 abierto una semana.")
    for since in (1, REVERT_WITHIN + 1, 40):
        found = decide_revert(check("Perfecto", [FIRST, named], since_reset=since))
        assert found is not None
        assert (found.reason, found.shared) == ("reply_names_case", ("#4821",))
    late = REVERT_WITHIN + 1
    runs = Exchange(5, 2, "Vale", "El 4821 era otro.")
    both = Exchange(5, 2, "Vale", "El #4821 se cerró; os abro el #9120 y el #9121.")
    for episode in ([FIRST, runs], [FIRST, both], [named, FIRST]):
        assert decide_revert(check("Perfecto", episode, since_reset=late)) is None


def test_facts_of_the_new_episode_outweigh_the_old_ones() -> None:
    """A message naming more of the new case's facts than the old one's stays in it."""
    new = Exchange(4, 2, "Mi pedido 7781 y el 7790 no llegan", "Lo miro.")
    message = "Los pedidos 7781 y 7790, y también el ticket #4821"
    assert decide_revert(check(message, [new])) is None
    assert decide_revert(check("Y el ticket #4821", [new])) is not None


def test_a_short_yes_does_not_answer_when_the_new_episode_asked_something() -> None:
    """ "Sí" after the new episode's own question answers that one: the reset stands."""
    asked = Exchange(4, 2, "¿Tenéis tarjetas regalo?", "Sí. ¿De qué importe la quiere?")
    assert decide_revert(check("Sí", [asked])) is None


def test_no_question_no_answer() -> None:
    """When the old episode's last reply asked nothing, "sí" takes nothing back."""
    quiet = PreviousCase(1, CASE.facts, CASE.terms, "")
    assert decide_revert(check("Sí", [FIRST], previous=quiet)) is None


def test_the_signals_name_the_reason_and_what_was_shared() -> None:
    """What the turn's topic decision records of a revert."""
    revert = decide_revert(check("El ticket #4821 sigue abierto", [FIRST]))
    assert revert is not None
    signals = revert.signals()
    assert signals["reset_reverted"] is True
    assert signals["reset_revert_reason"] == "shared_facts"
    assert signals["reset_revert_shared"] == ["#4821"]
