"""The key-facts section: which facts deserve a line, how a line reads, what goes first.

Salience: a time of day or a percentage is routine ("lo probé a las 14:30", "batería al
80 %") unless its sentence ties it to a commitment or to money ("te llamo el martes a las
10:00", "un descuento del 15 %"); routine values are not required of a summary. The cap
sheds by `PRIORITY`, pinned opening facts last.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Protocol

from memory.caches import FOLD_TEXTS
from memory.facts import IDENTITY_KINDS, Fact, FactKind, facts_of

# How much a kind is worth keeping when the key-facts section must shrink. Higher stays
# longer. Who the user is and the identifiers of their case (IBAN, account, the order,
# their contact details) are what a user comes back for; then the systems involved (IP,
# host), money, dates (usually commitments); URLs can be found again; percentages and
# times are the most incidental (and repeated everywhere), so they go first.
PRIORITY: dict[FactKind, int] = {
    "name": 8,
    "company": 8,
    "iban": 8,
    "account": 8,
    "username": 8,
    "bic": 7,
    "card": 7,
    "id": 7,
    "email": 7,
    "phone": 7,
    "postcode": 7,
    "address": 7,
    "person": 6,
    "ip": 6,
    "host": 6,
    "tracking": 6,
    "plate": 6,
    "amount": 5,
    "version": 5,
    "slot": 5,
    "date": 4,
    "measure": 3,
    "count": 3,
    "url": 3,
    "number": 3,
    "percent": 2,
    "quote": 2,
    "named": 2,
    "time": 1,
}


# Facts from the opening of an episode (the order number, the phone, the amount paid)
# outrank everything else when the key-facts section must shrink.
PINNED_BONUS = 100
INCIDENTAL_KINDS = frozenset({"time", "percent"})
# Words that tie a time or a percentage to something a user would come back for.
_COMMITMENT = re.compile(
    r"(?i)\b(?:te llam\w*|le llam\w*|llamar[eé]\w*|te escrib\w*|quedamos|cita|visita\w*"
    r"|t[eé]cnico|pasar[aá]\w*|vendr[aá]\w*|entreg\w*|plazo|antes de|hasta las|a partir de"
    r"|reuni[oó]n|horario|abrimos|cerramos|recog\w*|reserv\w*|program\w*|agend\w*"
    r"|lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo|ma[nñ]ana por|el d[ií]a"
    r"|descuento|rebaja|iva|inter[eé]s|comisi[oó]n|recargo|penalizaci[oó]n|reembols\w*"
    r"|call you|i'll call|we'll|will call|appointment|meeting|visit\w*|deliver\w*|pick up"
    r"|deadline|until|before|by|scheduled|schedule|booked|book|open|close|tomorrow at"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|discount|vat|interest|fee"
    r"|refund\w*|surcharge|penalty|off)\b"
)
_ZONED = re.compile(r"\s[A-Z]{3,4}(?:[+-]\d{1,2})?$")
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?\n]|$)")


# Kinds noted only beside a case's own facts: "2 adults" on a ferry booking is a detail
# the user comes back to, "i have 2 dogs" in a chat is talk, and the case's identifiers,
# money or contacts are what tell the two apart.
CONTEXTUAL_KINDS = frozenset({"count"})
# fmt: off
CASE_KINDS = frozenset({
    "id", "account", "card", "iban", "ip", "host", "tracking", "plate", "amount", "email",
    "phone", "postcode", "address", "username", "bic",
})
# fmt: on


def in_case(facts: Sequence[Fact]) -> list[Fact]:
    """`facts` without the contextual kinds when none of them is a case's own fact."""
    if any(f.kind in CASE_KINDS for f in facts):
        return list(facts)
    return [f for f in facts if f.kind not in CONTEXTUAL_KINDS]


def salient_facts(text: str) -> list[Fact]:
    """The facts of `text` worth a key-facts line: every fact but routine times and
    percentages (one whose every sentence lacks a commitment or money word)."""
    facts = facts_of(text)
    if not any(f.kind in INCIDENTAL_KINDS for f in facts):
        return list(facts)
    tied = _tied_values(text)
    return [f for f in facts if not _routine(f, tied)]


def _routine(fact: Fact, tied: Iterable[str] | frozenset[str]) -> bool:
    """An incidental value no sentence ties to a commitment; a time given with its zone
    ("09:40 PST") is never routine: someone read it off a record."""
    if fact.kind not in INCIDENTAL_KINDS or fact.value.casefold() in tied:
        return False
    return _ZONED.search(fact.value) is None


def _tied_values(text: str) -> frozenset[str]:
    """The incidental values of the sentences of `text` that name a commitment."""
    return frozenset().union(*map(_sentence_tied, _SENTENCE.findall(text)))


@lru_cache(maxsize=FOLD_TEXTS)
def _sentence_tied(sentence: str) -> frozenset[str]:
    """Cached: a summary's sentences come back in every fold, each a new body text."""
    if not (sentence.strip() and _COMMITMENT.search(sentence)):
        return frozenset()
    return frozenset(f.value.casefold() for f in facts_of(sentence) if f.kind in INCIDENTAL_KINDS)


def salient(facts: Iterable[Fact], texts: Iterable[str]) -> list[Fact]:
    """`facts` without the incidental ones no sentence of `texts` ties to a commitment."""
    listed = list(facts)
    if not any(f.kind in INCIDENTAL_KINDS for f in listed):
        return listed
    tied: set[str] = set()
    for text in texts:
        tied |= _tied_values(text)
    return [f for f in listed if not _routine(f, tied)]


class LineRender(Protocol):
    """Writes a fact's key-fact line, and can write lines without their context words
    (`memory.fold.inwords.KeyFactLines`)."""

    def __call__(self, fact: Fact) -> str: ...

    def shed(
        self,
        facts: Sequence[Fact],
        over: int,
        count_tokens: Callable[[str], int],
        pinned: frozenset[Fact] = frozenset(),
    ) -> int: ...


def cap_key_facts(
    facts: Sequence[Fact],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    pinned: frozenset[Fact] = frozenset(),
    language: str = "es",
    render: LineRender | None = None,
) -> tuple[list[Fact], list[Fact]]:
    """Keep what fits in `budget_tokens` as key-fact lines; drop the least valuable first.

    Lower `PRIORITY` goes first (a bare-number id counts one lower; `pinned` facts, from
    the opening of the episode, go last of all). Within a kind it
    depends on what the kind is: identity facts (ids, emails, phones, postcodes, URLs) are
    given once and stay true, so the most recently
    introduced go first and the account number of message three survives; state values
    (dates, times, amounts, percentages) get updated, so the oldest go first. Both lists
    keep the input order. Lines `render` writes in the chat's words lose those words
    (`KeyFactLines.shed`) before any fact goes: a fact outranks its context.
    """

    def line(fact: Fact) -> str:
        return render(fact) if render is not None else render_fact(fact, language)

    total = sum(count_tokens(line(fact)) for fact in facts)
    if render is not None and total > budget_tokens:
        render.shed(facts, total - budget_tokens, count_tokens, pinned)
    costs = [count_tokens(line(fact)) for fact in facts]
    total = sum(costs)
    doomed: set[int] = set()
    for index in expendable_order(facts, pinned):
        if total <= budget_tokens:
            break
        doomed.add(index)
        total -= costs[index]
    kept = [f for i, f in enumerate(facts) if i not in doomed]
    dropped = [f for i, f in enumerate(facts) if i in doomed]
    return kept, dropped


def expendable_order(facts: Sequence[Fact], pinned: frozenset[Fact] = frozenset()) -> list[int]:
    """The indexes of `facts`, the first to go first (`cap_key_facts`)."""

    def expendable(i: int) -> tuple[int, int]:
        fact = facts[i]
        # A bare number caught after a label ("seguimiento 239") is a less certain id than
        # a structured one ("TRK-5590217", "#PED-48213"): it goes first among ids.
        weak = fact.kind == "id" and fact.value.isdigit()
        rank = PRIORITY.get(fact.kind, 0) - weak + PINNED_BONUS * (fact in pinned)
        return rank, (-i if fact.kind in IDENTITY_KINDS else i)

    return sorted(range(len(facts)), key=expendable)


# Labels that make a context-dependent value recognisable again on its own line, in the
# conversation's language (a Spanish summary says "fecha", an English one "person").
_RENDER_LABELS: dict[str, dict[FactKind, str]] = {
    "es": {
        "postcode": "CP",
        "id": "ref",
        "account": "número de cuenta",
        "tracking": "seguimiento",
        "plate": "matrícula",
        "card": "tarjeta acabada",
        "name": "nombre",
        "person": "persona",
        "company": "empresa",
        "bic": "SWIFT/BIC",
        "username": "usuario",
        "date": "fecha",
        "quote": "mensaje",
    },
    "en": {
        "postcode": "postcode",
        "id": "ref",
        "account": "account number",
        "tracking": "tracking",
        "plate": "plate",
        "card": "card ending",
        "name": "name",
        "person": "person",
        "company": "company",
        "bic": "SWIFT/BIC",
        "username": "username",
        "date": "date",
        "quote": "message",
    },
}
RENDER_LANGUAGES = tuple(_RENDER_LABELS)
_ORDINAL_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)")


def render_fact(fact: Fact, language: str = "es") -> str:
    """One key-facts line, as appended to a summary: "- IP del servidor: 185.42.17.9"
    when the text said what the value is. It must extract back to the same fact (and
    label), or the next fold would not require it and it would silently disappear: a bare
    "28028" is no postcode, "CP 28028" is. A value that needs a word to be read again
    gets one in `language` (Spanish or English; another language reads as English), or
    the other language's when its own does not read back ("21st" is no "fecha")."""
    own = _RENDER_LABELS.get(language[:2], _RENDER_LABELS["en"])
    if fact.kind == "quote":  # read back only inside its quotes, after its word
        return f"- {own['quote']}: «{fact.value}»"
    if fact.kind == "named":  # read back by its capitals; a word before it would not help
        return f"- {fact.value}"
    if fact.label:
        labelled = f"- {fact.label}: {fact.value}"
        if _round_trips(fact, labelled):
            return labelled
    plain = f"- {fact.value}"
    said = _as_said(fact, language)
    if said is not None and _round_trips(fact, said):
        return said
    if _round_trips(fact, plain):
        return plain
    if _ORDINAL_DAY.fullmatch(fact.value) and _reads_back(fact, f"- the {fact.value}"):
        return f"- the {fact.value}"  # an ordinal day is one after "the" ("the 28th")
    # Read back, the word becomes the label, and renders the same line again.
    words = [table.get(fact.kind, fact.kind) for table in (own, *_RENDER_LABELS.values())]
    for word in dict.fromkeys(words):
        line = f"- {word}: {fact.value}"
        if _reads_back(fact, line):
            return line
    return f"- {words[0]}: {fact.value}"


def _as_said(fact: Fact, language: str) -> str | None:
    """A Spanish date or time the way it is said ("el 14/03", "a las 23:48"): the line a
    user's own words most often hold; None for other kinds and languages."""
    if language[:2] != "es":
        return None
    if fact.kind == "date":
        return f"- el {fact.value}"
    if fact.kind == "time" and fact.value[:1].isdigit():
        return f"- {'a la' if fact.value.split(':')[0] in ('1', '01') else 'a las'} {fact.value}"
    return None


def _reads_back(fact: Fact, line: str) -> bool:
    found = facts_of(line)
    return len(found) == 1 and (found[0].kind, found[0].value) == (fact.kind, fact.value)


def _round_trips(fact: Fact, line: str) -> bool:
    found = facts_of(line)
    return len(found) == 1 and found[0] == fact and found[0].label == fact.label
