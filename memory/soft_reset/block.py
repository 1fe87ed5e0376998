"""Whether the previous case is still in play for a message, and its labelled block.

Pure. After an automatic reset the closed episode's case facts ride into the new one,
in their own block ("from the previous conversation; may be unrelated"), during its
first `SOFT_MESSAGES` messages and afterwards for as long as the new episode refers to
the old case: the new message or an exchange of its window (the user's words or the
bot's: "cierro la avería AV-5561093" is the old case going on) mentions one of those
facts, or the new message shares `MIN_SHARED_TERMS` of the case's terms that the user
has not used in the new episode. Then recall also searches the closed episode. Otherwise
only the identity carry-over stays (invariant 6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from memory.blocks import CASE_TAG, render_block
from memory.facts import facts_of
from memory.fold.inwords import QUOTED
from memory.recall.terms import terms
from memory.soft_reset.case import aligned_words, mentioned
from memory.types import Exchange, PreviousCase

SOFT_MESSAGES = 3  # messages after the reset that carry the previous case whatever they say
MIN_SHARED_TERMS = 2
CASE_TOKENS = 300  # the block's cap (the engine lowers it for small budgets)
InPlay = Literal["recent", "shared_facts", "shared_terms"]

_LABELS = {
    "es": (
        "datos del caso anterior de este usuario, de la conversación previa (antes de un "
        "cambio de tema); puede no tener relación con lo que pregunta ahora"
    ),
    "en": (
        "facts of this user's previous case, from the previous conversation (before a change "
        "of subject); may be unrelated to what they ask now"
    ),
}


# What each kind of fact is called in the block, in the conversation's language (a kind
# not listed shows its own name).
_KIND_WORDS: dict[str, dict[str, str]] = {
    "es": {
        "id": "ref",
        "amount": "importe",
        "date": "fecha",
        "time": "hora",
        "phone": "teléfono",
        "address": "dirección",
        "account": "cuenta",
        "iban": "IBAN",
        "ip": "IP",
        "tracking": "seguimiento",
        "plate": "matrícula",
        "card": "tarjeta",
        "name": "nombre",
        "person": "persona",
        "company": "empresa",
        "postcode": "CP",
        "percent": "porcentaje",
        "number": "número",
        "slot": "lugar",
        "measure": "cantidad",
        "count": "cantidad",
        "quote": "mensaje",
        "named": "nombre",
        "version": "versión",
        "username": "usuario",
    },
    "en": {
        "quote": "message",
        "named": "name",
        "slot": "place",
        "measure": "quantity",
        "count": "quantity",
        "iban": "IBAN",
        "ip": "IP",
    },
}


def in_play(
    previous: PreviousCase | None, message: str, episode: Sequence[Exchange], since_reset: int
) -> InPlay | None:
    """Why the previous case still rides with `message`, or None. `episode`: the new
    episode's exchanges at hand (its window), `since_reset`: its messages so far."""
    if previous is None:
        return None
    if since_reset <= SOFT_MESSAGES:
        return "recent"
    texts = (message, *(t for ex in episode for t in (ex.user_text, ex.reply_text)))
    if any(mentioned(previous.facts, text) for text in texts):
        return "shared_facts"
    if len(shared_terms(previous, message, episode)) >= MIN_SHARED_TERMS:
        return "shared_terms"
    return None


def shared_terms(
    previous: PreviousCase, message: str, episode: Sequence[Exchange]
) -> frozenset[str]:
    """The case's terms in `message` that the user has not said in the new episode."""
    own = {t for ex in episode for t in terms(ex.user_text)}
    return frozenset(terms(message)).intersection(previous.terms) - own


def case_block(
    previous: PreviousCase, language: str, count: Callable[[str], int], cap: int
) -> str:
    """The labelled block of the previous case's facts within `cap` tokens, each in the
    words the chat gave it (`PreviousCase.words`) or as "- kind: value". Over the cap,
    the least valuable facts (last in `previous.facts`) lose their words first, then
    are left out; "" when none fits."""
    label = _LABELS.get(language[:2], _LABELS["en"])

    def block(lines: Sequence[str]) -> str:
        return render_block(CASE_TAG, {}, label, "\n".join(lines))

    worded = len(previous.facts)
    if count(block(_lines(previous, language, worded))) > cap:
        fits, worded = 0, worded - 1  # the most facts that keep their words and fit
        while fits < worded:
            middle = (fits + worded + 1) // 2
            if count(block(_lines(previous, language, middle))) <= cap:
                fits = middle
            else:
                worded = middle - 1
    lines = _lines(previous, language, worded)
    while lines:
        text = block(lines)
        if count(text) <= cap:
            return text
        lines.pop()
    return ""


def _lines(previous: PreviousCase, language: str, worded: int) -> list[str]:
    """The block's lines: the first `worded` facts in their words where the chat gave
    some, the rest bare; a fact whose value an earlier line already gives has none."""
    kinds = _KIND_WORDS.get(language[:2], _KIND_WORDS["en"])
    words = aligned_words(previous)
    out: list[str] = []
    given: set[str] = set()
    for n, (kind, value) in enumerate(previous.facts):
        if value in given:
            continue
        said = words[n] if n < worded else ""
        line = said or f"- {kinds.get(kind, kind)}: {value}"
        given.add(value)
        if said:
            given.update(f.value for f in facts_of(said))
        _place(out, line)
    return out


def _place(out: list[str], line: str) -> None:
    """`line` added to `out`, unless a line there says all of it; one there whose words
    it says whole gives way to it ("PST desde Seattle" to "sale a las 09:40 PST desde
    Seattle": two facts of one clause)."""
    body = _body(line)
    for n, held in enumerate(out):
        if body in _body(held):
            return
        if _body(held) in body:
            out[n] = line
            return
    out.append(line)


def _body(line: str) -> str:
    quoted = QUOTED.fullmatch(line)
    return quoted["body"] if quoted else line[2:]
