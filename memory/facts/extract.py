"""Hard facts a summary must never lose, found deterministically in Spanish and English.

Every extracted value is the exact substring of the input, so it can be checked for and
appended verbatim. Kinds and what they cover:

- ``id``: ``#4821``, ``#A-5521``, ``order-731``, ``PED-310``, ``AB-12-CD``, the number
  after "ticket"/"factura"/"pedido"/"invoice"…
- ``date``, ``time``, ``amount`` (with a currency), ``percent``, ``phone``, ``email``, ``url``,
  ``postcode`` (`memory.facts.rules`);
- ``iban``, ``account``, ``ip``, ``host``, ``tracking``, ``address``, ``plate``, ``name``,
  ``company`` (`memory.facts.kinds`).

A fact carries a `label` (what the value is, when the words before it say so: "IP del
servidor"); it takes no part in equality, so the same value found twice is one fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from memory.facts.kinds import DIGITLESS_KINDS, KIND_RULES, plausible_kind
from memory.facts.labels import label_before
from memory.facts.presence import _PLAIN, _is_word, _present, missing_facts
from memory.facts.rules import _ODD_CASE, BASE_RULES, Fact, FactKind, _lowered

__all__ = [
    "IDENTITY_KINDS",
    "_ODD_CASE",
    "_PLAIN",
    "Fact",
    "FactKind",
    "_is_word",
    "_present",
    "dedupe",
    "extract_facts",
    "facts_of",
    "missing_facts",
]

# Given once and true for the whole case (the rest are state that gets updated).
IDENTITY_KINDS = frozenset(
    {
        "id",
        "email",
        "phone",
        "postcode",
        "url",
        "iban",
        "account",
        "card",
        "ip",
        "host",
        "tracking",
        "address",
        "plate",
        "name",
        "company",
    }
)


# The user's own kinds first: on the same span they are the more precise reading
# ("póliza 0045-778" is an account number, not a generic id).
_PATTERNS = [*BASE_RULES[:2], *KIND_RULES, *BASE_RULES[2:]]
# Every kind but these is made of digits: a text without any skips their patterns.
_DIGITLESS_KINDS = frozenset({"url", "email"}) | DIGITLESS_KINDS
_RANKED = list(enumerate(_PATTERNS))
_RANKED_DIGITLESS = [(rank, rule) for rank, rule in _RANKED if rule.kind in _DIGITLESS_KINDS]
_DIGIT = re.compile(r"\d")
_TRAILING = ".,;:!?)]}'\"»”’"
_PHONE_DIGITS = (8, 15)


def extract_facts(text: str) -> list[Fact]:
    """Hard facts of `text`, in order of appearance, without duplicates (a fresh list of
    `facts_of`)."""
    return list(facts_of(text))


@lru_cache(maxsize=8192)
def facts_of(text: str) -> tuple[Fact, ...]:
    """The facts of `text`: the one place they are computed. Cached: folds and the fact
    guard see the same summary and exchanges again and again."""
    spans = sorted(_candidates(text), key=lambda c: (c[0], -(c[1] - c[0]), c[3]))
    facts: list[Fact] = []
    end_of_last = -1
    for start, end, kind, _ in spans:
        if start >= end_of_last:
            facts.append(Fact(kind, text[start:end], label_before(text, start)))
            end_of_last = end
    return tuple(dedupe(facts))


def _candidates(text: str) -> Iterable[tuple[int, int, FactKind, int]]:
    """Every match of every pattern; a pattern is not run on a text without its gates."""
    lowered: str | None = None
    rules = _RANKED if _DIGIT.search(text) is not None else _RANKED_DIGITLESS
    for rank, rule in rules:
        # A plain loop: `all()` over a generator costs more than most gates.
        passed = True
        for gate in rule.gates:
            if gate.search(text) is None:
                passed = False
                break
        if not passed:
            continue
        first = 0
        if rule.starts is not None:
            if lowered is None:
                lowered = _lowered(text)
            # Without an odd character, a word matched ignoring case is the same word
            # lowered at the same index.
            if lowered:
                found = rule.starts.search(lowered)
                if found is None:
                    continue
                first = found.start()
        kind = rule.kind
        # From `first` on as in the whole text: lookbehinds and \b still see before it.
        for match in rule.pattern.finditer(text, first):
            start, end = match.span(rule.group)
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
        if value.startswith("0"):  # a national number, trunk 0 included
            return 10 <= digits <= 12
        return _PHONE_DIGITS[0] <= digits <= _PHONE_DIGITS[1]
    return plausible_kind(kind, value)


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


@lru_cache(maxsize=8192)
def _squash(value: str) -> str:
    """Cached: `dedupe` sees the same required facts several times per fold."""
    return "".join(value.casefold().split())
