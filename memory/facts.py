"""Hard facts a summary must never lose, found deterministically in Spanish and English.

Every extracted value is the exact substring of the input, so it can be checked for and
appended verbatim. Kinds and what they cover:

- ``id``: ``#4821``, ``#A-5521``, ``order-731``, ``PED-310``, ``AB-12-CD``, the number
  after "ticket"/"factura"/"pedido"/"invoice"…
- ``date``, ``time``, ``amount`` (with a currency), ``percent``, ``phone``, ``email``, ``url``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

FactKind = str

# How much a kind is worth keeping when the key-facts section must shrink. Higher stays
# longer. Identifiers, contact details and money are what a user comes back for; dates are
# usually commitments; URLs can be found again; percentages and times are the most
# incidental (and repeated everywhere), so they go first.
PRIORITY: dict[FactKind, int] = {
    "id": 7,
    "email": 7,
    "phone": 7,
    "postcode": 7,
    "amount": 5,
    "date": 4,
    "url": 3,
    "percent": 2,
    "time": 1,
}


# Facts from the opening of an episode (the order number, the phone, the amount paid)
# outrank everything else when the key-facts section must shrink.
PINNED_BONUS = 100
IDENTITY_KINDS = frozenset({"id", "email", "phone", "postcode", "url"})


@dataclass(frozen=True, slots=True)
class Fact:
    kind: FactKind
    value: str


_NUM = r"\d{1,3}(?:[.,\u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOL = r"US\$|MX\$|R\$|C\$|A\$|[$€£¥]"
_CODE = (
    r"USD|EUR|MXN|GBP|ARS|COP|CLP|PEN|BRL|CAD|AUD|JPY|CHF|UYU|BOB|VES|GTQ|CRC|DOP|PYG|HNL"
    r"|NIO|PAB"
)
_WORD = (
    r"(?i:euros?|d[oó]lares|dollars?|pesos?|libras?|pounds?|soles|bol[ií]vares|c[eé]ntimos"
    r"|centavos|cents)"
)
_ES_MONTH = (
    r"(?i:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre"
    r"|noviembre|diciembre)"
)
_EN_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])"
_AMPM = r"(?i:[ap]\.?\s?m\.?)(?!\w)"
_ID_WORDS = (
    r"(?i:ticket|tiquet|invoice|factura|pedido|order|orden|caso|case|expediente|incidencia"
    r"|reference|referencia|ref|reserva|booking|albar[aá]n|tracking|seguimiento|contrato"
    r"|contract|p[oó]liza|policy|cuenta|account)"
)

# (kind, pattern, capture group holding the value). Order breaks ties between overlaps.
_PATTERNS: list[tuple[FactKind, re.Pattern[str], int]] = [
    ("url", re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`«»]+"), 0),
    (
        "email",
        re.compile(r"\b[\w.%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
        0,
    ),
    ("date", re.compile(r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:[12]\d|3[01]|0[1-9])\b"), 0),
    (
        "date",
        re.compile(rf"(?<![\d/.-]){_DAY}([/.-])(?:1[0-2]|0?[1-9])\1(?:\d{{4}}|\d{{2}})\b"),
        0,
    ),
    (
        "date",
        re.compile(rf"\b{_DAY}\s+de\s+{_ES_MONTH}(?:\s+(?i:de|del)\s+\d{{4}}(?![\d/-]))?\b"),
        0,
    ),
    (
        "date",
        re.compile(rf"\b{_EN_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}(?![\d/-]))?"),
        0,
    ),
    (
        "date",
        re.compile(
            rf"\b{_DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}\b(?:,?\s+\d{{4}}(?![\d/-]))?"
        ),
        0,
    ),
    (
        "time",
        re.compile(rf"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?{_AMPM})?(?![\d:])"),
        0,
    ),
    ("time", re.compile(rf"\b(?:1[0-2]|0?[1-9])\s?{_AMPM}"), 0),
    ("amount", re.compile(rf"(?:(?<!\w)(?:{_SYMBOL})|\b(?:{_CODE}))\s?(?:{_NUM})(?![\d%])"), 0),
    ("amount", re.compile(rf"(?<![\d.,])(?:{_NUM})\s?(?:{_SYMBOL}|(?:{_CODE}|{_WORD})\b)"), 0),
    (
        "percent",
        re.compile(rf"(?<![\d.,])(?:{_NUM})\s?(?:%|(?i:por\s?ciento|percent|per\s?cent)\b)"),
        0,
    ),
    ("phone", re.compile(r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\d)"), 0),
    ("phone", re.compile(r"(?<![\d)])\(\d{3}\)\s?\d{3}[\s.-]?\d{4}(?!\d)"), 0),
    ("phone", re.compile(r"(?<![\d.-])\d{3}[.-]\d{3}[.-]\d{4}(?![\d.-])"), 0),
    (
        "phone",
        re.compile(r"(?<![\d.,])[6789]\d{2}(?:[ .]\d{3}[ .]\d{3}|(?:[ .]\d{2}){3})(?![\d.,])"),
        0,
    ),
    # A postcode is part of an address only next to its city ("28028 Madrid") or named
    # ("CP 28028", "código postal 08001", "ZIP 94105"); a bare five-digit number is not.
    ("postcode", re.compile(r"(?<![\w.,-])\d{5}(?=\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñ]{2,})"), 0),
    (
        "postcode",
        re.compile(r"(?i:\bc\.?\s?p\.?|c[oó]digo postal|zip(?: code)?|postcode)\s*:?\s*(\d{5})\b"),
        1,
    ),
    ("id", re.compile(r"(?<!\w)#(?=[A-Za-z0-9-]{0,40}\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*"), 0),
    (
        "id",
        re.compile(r"\b(?=[A-Z0-9-]{0,40}\d)(?=[A-Z0-9-]{0,40}[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b"),
        0,
    ),
    ("id", re.compile(r"\b[A-Za-z][A-Za-z0-9]{0,11}[-_]\d{2,}(?:[-_][A-Za-z0-9]+)*\b"), 0),
    ("id", re.compile(r"\b(?=[A-Z]{0,40}\d)(?=\d{0,40}[A-Z])[A-Z0-9]{5,}\b"), 0),
    (
        "id",
        re.compile(
            rf"\b{_ID_WORDS}\s*(?i:n[º°o]\.?|n[uú]m(?:ero)?\.?|number|no\.)?\s*[:#]?\s*"
            r"(\d[\w-]{2,})"
        ),
        1,
    ),
]
_TRAILING = ".,;:!?)]}'\"»”’"
_PHONE_DIGITS = (8, 15)


def extract_facts(text: str) -> list[Fact]:
    """Hard facts of `text`, in order of appearance, without duplicates."""
    return list(_extract(text))


@lru_cache(maxsize=8192)
def _extract(text: str) -> tuple[Fact, ...]:
    """Cached: folds and the fact guard see the same summary and exchanges again and again."""
    spans = sorted(_candidates(text), key=lambda c: (c[0], -(c[1] - c[0]), c[3]))
    facts: list[Fact] = []
    end_of_last = -1
    for start, end, kind, _ in spans:
        if start >= end_of_last:
            facts.append(Fact(kind, text[start:end]))
            end_of_last = end
    return tuple(dedupe(facts))


def _candidates(text: str) -> Iterable[tuple[int, int, FactKind, int]]:
    for rank, (kind, pattern, group) in enumerate(_PATTERNS):
        for match in pattern.finditer(text):
            start, end = match.span(group)
            end = _strip_trailing(text, start, end, kind)
            if end > start and _bounded(text, start, end) and _plausible(kind, text[start:end]):
                yield start, end, kind, rank


def _strip_trailing(text: str, start: int, end: int, kind: FactKind) -> int:
    if kind in ("url", "id"):
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
    return end


def _bounded(text: str, start: int, end: int) -> bool:
    """A value never starts or ends inside a word (the same rule `missing_facts` uses)."""
    if _is_word(text[start]) and start > 0 and _is_word(text[start - 1]):
        return False
    return not (_is_word(text[end - 1]) and end < len(text) and _is_word(text[end]))


def _plausible(kind: FactKind, value: str) -> bool:
    if kind == "phone":
        digits = sum(c.isdigit() for c in value)
        return _PHONE_DIGITS[0] <= digits <= _PHONE_DIGITS[1]
    return True


def missing_facts(facts: Iterable[Fact], text: str) -> list[Fact]:
    """Facts whose value does not appear in `text` (ignoring case and whitespace)."""
    return [fact for fact in facts if not _present(fact.value, text)]


def _present(value: str, text: str) -> bool:
    chars = [c for c in value if not c.isspace()]
    if not chars:
        return True
    body = r"\s*".join(re.escape(c) for c in chars)
    before = r"(?<!\w)" if _is_word(chars[0]) else ""
    after = r"(?!\w)" if _is_word(chars[-1]) else ""
    return re.search(before + body + after, text, re.IGNORECASE) is not None


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def cap_key_facts(
    facts: Sequence[Fact],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    pinned: frozenset[Fact] = frozenset(),
) -> tuple[list[Fact], list[Fact]]:
    """Keep what fits in `budget_tokens` as key-fact lines; drop the least valuable first.

    Lower `PRIORITY` goes first (a bare-number id counts one lower; `pinned` facts, from
    the opening of the episode, go last of all). Within a kind it
    depends on what the kind is: identity facts (ids, emails, phones, postcodes, URLs) are
    given once and stay true, so the most recently
    introduced go first and the account number of message three survives; state values
    (dates, times, amounts, percentages) get updated, so the oldest go first. Both lists
    keep the input order.
    """
    costs = [count_tokens(render_fact(fact)) for fact in facts]
    total = sum(costs)
    doomed: set[int] = set()

    def expendable(i: int) -> tuple[int, int]:
        fact = facts[i]
        # A bare number caught after a label ("seguimiento 239") is a less certain id than
        # a structured one ("TRK-5590217", "#PED-48213"): it goes first among ids.
        weak = fact.kind == "id" and fact.value.isdigit()
        rank = PRIORITY.get(fact.kind, 0) - weak + PINNED_BONUS * (fact in pinned)
        return rank, (-i if fact.kind in IDENTITY_KINDS else i)

    for index in sorted(range(len(facts)), key=expendable):
        if total <= budget_tokens:
            break
        doomed.add(index)
        total -= costs[index]
    kept = [f for i, f in enumerate(facts) if i not in doomed]
    dropped = [f for i, f in enumerate(facts) if i in doomed]
    return kept, dropped


# Labels that make a context-dependent value recognisable again on its own line.
_RENDER_LABELS: dict[FactKind, str] = {"postcode": "CP", "id": "ref"}


def render_fact(fact: Fact) -> str:
    """One key-facts line, as appended to a summary. It must extract back to the same
    fact, or the next fold would not require it and it would silently disappear: a bare
    "28028" is no postcode, "CP 28028" is."""
    plain = f"- {fact.value}"
    if fact in _extract(plain):
        return plain
    return f"- {_RENDER_LABELS.get(fact.kind, fact.kind)} {fact.value}"


def dedupe(facts: Iterable[Fact]) -> list[Fact]:
    """Facts without repeats (same kind, same value ignoring case and spaces), in order."""
    seen: set[tuple[str, str]] = set()
    out: list[Fact] = []
    for fact in facts:
        key = (fact.kind, _squash(fact.value))
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def _squash(value: str) -> str:
    return "".join(value.casefold().split())
