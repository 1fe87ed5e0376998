"""Hard facts a summary must never lose, found deterministically in Spanish and English.

Every extracted value is the exact substring of the input, so it can be checked for and
appended verbatim. Kinds and what they cover:

- ``id``: ``#4821``, ``#A-5521``, ``order-731``, ``PED-310``, ``AB-12-CD``, the number
  after "ticket"/"factura"/"pedido"/"invoice"…
- ``date``, ``time``, ``amount`` (with a currency), ``percent``, ``phone``, ``email``, ``url``,
  ``postcode`` (`memory.facts.rules`);
- ``iban``, ``account``, ``ip``, ``host``, ``tracking``, ``address``, ``plate``, ``name``,
  ``company`` (`memory.facts.kinds`);
- ``slot`` ("caja 34", "seat 14C"), ``measure`` ("500 litres"), and more shapes of ids,
  postcodes, dates and versions (`memory.facts.details`).

A fact carries a `label` (what the value is, when the words before it say so: "IP del
servidor"); it takes no part in equality, so the same value found twice is one fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from memory.caches import FOLD_TEXTS
from memory.facts.details import DETAIL_RULES
from memory.facts.handover import note_read, taken
from memory.facts.kinds import DIGITLESS_KINDS, KIND_RULES, plausible_kind
from memory.facts.labels import label_before
from memory.facts.named import NAMED_RULES
from memory.facts.presence import _PLAIN, _is_word, _present, missing_facts
from memory.facts.rules import _ODD_CASE, BASE_RULES, Fact, FactKind, _lowered, _Rule

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
        "bic",
        "account",
        "username",
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
# ("póliza 0045-778" is an account number, not a generic id). The details' shapes
# (`memory.facts.details`) after the first rules, and the bare number last of all.
_PATTERNS = [
    *BASE_RULES[:2],
    *KIND_RULES,
    *BASE_RULES[2:-1],
    *DETAIL_RULES,
    BASE_RULES[-1],
    *NAMED_RULES,
]
# Every kind but these is made of digits: a text without any skips their patterns.
_DIGITLESS_KINDS = frozenset({"url", "email"}) | DIGITLESS_KINDS
# The run of digits in a row every match of a gate holds (a lookbehind's digits
# included): a text whose longest run is shorter fails that gate, so one `findall`
# spares the search of each such gate (a reply's "respuesta 320" rules out every gate of
# four digits or more). Each figure is checked against the gate's parse
# (tests/memory/facts/test_digit_runs.py); a gate not listed needs at most one digit.
_GATE_RUNS = {
    r"\d\d": 2,
    r"[A-Z][A-Z]\d\d": 2,
    r"[A-Z]\d\d[ ]?[A-Z]": 2,
    r":(?<=\d:)[0-5]\d": 2,
    r"0\d{1,4}[ .-]\d\d": 2,
    r"[-_](?<=[A-Za-z0-9][-_])\d\d": 2,
    r"[A-Z]\s\d\d+\s\d\d": 2,
    r"\d\d\d": 3,
    r"[A-Z]\s\d\d\d": 3,
    r"9[1-8][ .]\d\d\d[ .]": 3,
    r"\(\d{3}\)": 3,
    r"[6789]\d{2}[ .]\d{2}": 3,
    r"\d\.\d\d\d\.\d\d\d": 3,
    r"GB\s?\d\d\d": 3,
    r"\d\d\d\d": 4,
    r"\d\d\d\d[ -]?[A-Z]": 4,
    r"-(?<=\d\d\d\d-)": 4,
    r"[.-](?<=\d\d\d[.-])\d\d\d[.-]\d\d\d\d": 4,
    r"\d\d\d\d\d": 5,
    r"\d{5}\s+[A-ZÁÉÍÓÚÑ]": 5,
    r"[A-Z]\s\d{6}": 6,
    r"\d{9}[A-Z]": 9,
}


# Gates that are a run of digits and nothing else: the text's longest run answers them,
# so they are never searched (`\d` is one digit: a text needs a run of one).
_RUN_GATES = {r"\d": 1, r"\d\d": 2, r"\d\d\d": 3, r"\d\d\d\d": 4, r"\d\d\d\d\d": 5}
# A gate written with a digit first, never optional ("\d", "\d{5}", "0", "[6789]"; not
# "\d?"): no match of it, nor of its literal-led form below (which starts right after that
# digit), starts before the text's first digit, so it is searched from there. Checked on
# each gate's parse (tests/memory/facts/test_gate_shortcuts.py).
_DIGIT_LED = re.compile(r"(?:\\d|\d|\[\d+\])(?![?*]|\{0)")
# Gates led by a character class, searched as the same gate led by a literal, the class
# checked behind it: the engine jumps from one occurrence of the literal to the next where
# a class tries every index (a reply's "\w\." matched at each letter). Gates led by
# no literal nor class (words ignoring case, alternatives) are searched led by a small
# class of the characters that start a match, each alternative checking behind it that
# it starts at the one found. Each finds a match exactly when its original does
# (tests/memory/facts/test_gate_shortcuts.py).
_LITERAL_LED = {
    r"(?i:swift|bic)": r"[SsſBb](?i:(?<=s)wift|(?<=b)ic)",
    r"[A-Za-z0-9][._][A-Za-z0-9]": r"[._](?<=[A-Za-z0-9][._])[A-Za-z0-9]",
    r"[$€£¥]|[A-Z][A-Z][A-Z]\s?\d": r"[$€£¥A-Z](?:(?<=[$€£¥])|(?<=[A-Z])[A-Z][A-Z]\s?\d)",
    r"\w\.(?i:[a-z][a-z])": r"\.(?<=\w\.)(?i:[a-z][a-z])",
    r"[0-9A-Fa-f]?:[0-9A-Fa-f:]": r":[0-9A-Fa-f:]",
    r"\d\.\d": r"\.(?<=\d\.)\d",
    r"\d/\d": r"/(?<=\d/)\d",
    r"[0-9A-Fa-f][:-][0-9A-Fa-f]{2}[:-]": r"[:-](?<=[0-9A-Fa-f][:-])[0-9A-Fa-f]{2}[:-]",
    r"\d\.\d\d\d\.\d\d\d": r"\.(?<=\d\.)\d\d\d\.\d\d\d",
}


def _run_needed(rule: _Rule) -> int:
    """The longest run of digits a text needs for `rule` to pass its gates."""
    runs = (max(_GATE_RUNS.get(g.pattern, 0), _RUN_GATES.get(g.pattern, 0)) for g in rule.gates)
    return max(runs, default=0)


def _searched(rule: _Rule) -> tuple[tuple[re.Pattern[str], bool], ...]:
    """The gates of `rule` the scan searches (those a run answers are not), each in its
    fastest form, and whether every match of it starts with a digit (then it is searched
    from the text's first digit: no match starts before it)."""
    return tuple(
        (
            re.compile(_LITERAL_LED.get(gate.pattern, gate.pattern)),
            _DIGIT_LED.match(gate.pattern) is not None,
        )
        for gate in rule.gates
        if gate.pattern not in _RUN_GATES
    )


_RANKED = [(rank, rule, _run_needed(rule), _searched(rule)) for rank, rule in enumerate(_PATTERNS)]
_RANKED_DIGITLESS = [ranked for ranked in _RANKED if ranked[1].kind in _DIGITLESS_KINDS]
_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+")
_TRAILING = ".,;:!?)]}'\"»”’"
_PHONE_DIGITS = (8, 15)
# A line break right after a closing quote is sealed: no match crosses it, since a match
# holding the break would hold the quote before it, and no pattern takes a closing quote
# but to end there (the quoted message of `memory.facts.details`, which holds no break;
# only the URL pattern has a negated class, and it stops at whitespace); the words
# that label a value are cut at every line break (`labels._CLAUSE`). So the facts of a
# text whose every break is sealed are those of its lines, in order, deduplicated: the
# same values, kinds and labels (tests/memory/facts/test_sealed_lines.py).
_SEALED = "»”"
_UNSEALED = re.compile(rf"(?:^|[^{_SEALED}\n])\n")
# But a gate is searched in the whole text: one found on another line lets a rule run on
# a line where it finds nothing of its own. That changes nothing for the rules whose
# gates every match holds (a line without the gate has no match); the rules led by
# start words may match without their gate (a company named "2024", an account number
# "12-34-56"): a line where one would find something only under the whole text's gate
# makes the whole text be read whole.
_LOOSE = [(rank, rule) for rank, rule, _, _ in _RANKED if rule.starts is not None]


def extract_facts(text: str) -> list[Fact]:
    """Hard facts of `text`, in order of appearance, without duplicates (a fresh list of
    `facts_of`)."""
    return list(facts_of(text))


@lru_cache(maxsize=FOLD_TEXTS)
def facts_of(text: str) -> tuple[Fact, ...]:
    """The facts of `text`: the one place they are computed. Cached: folds and the fact
    guard see the same summary and exchanges again and again. A text whose every line
    break is sealed (`_SEALED`) has the facts of its lines, each line read once however
    many texts hold it: the extractive summary's quoted lines come back every fold. Facts
    another process of ours read and handed over (`memory.facts.handover`) are taken as
    read here."""
    facts = taken(text)
    if facts is None:
        facts = _read(text)
    note_read(text, facts)
    return facts


def _read(text: str) -> tuple[Fact, ...]:
    if "\n" in text and _UNSEALED.search(text) is None:
        composed = _by_lines(text)
        if composed is not None:
            return composed
    return scan(text)


def _by_lines(text: str) -> tuple[Fact, ...] | None:
    """The facts of a sealed text from those of its lines; None when a rule of `_LOOSE`
    runs on the whole text and would find something on a line it does not run on."""
    readings = [_line_reading(line) for line in text.split("\n")]
    whole = _passing(text)
    if any(whole & unsure for _, unsure in readings):
        return None
    return tuple(dedupe(fact for facts, _ in readings for fact in facts))


@lru_cache(maxsize=FOLD_TEXTS)
def _line_reading(line: str) -> tuple[tuple[Fact, ...], int]:
    """A line's facts, and the rules of `_LOOSE` (a mask) that do not run on it but would
    find something there (rare: most lines lack their start words)."""
    lowered, passed, unsure = _lowered(line), _passing(line), 0
    for bit, (rank, rule) in enumerate(_LOOSE):
        found = rule.starts.search(lowered) if lowered and rule.starts else None
        if passed >> bit & 1 or (lowered and found is None):
            continue
        if next(iter(_matches(line, rank, rule, found.start() if found else 0, lowered)), None):
            unsure |= 1 << bit
    return facts_of(line), unsure


def _passing(text: str) -> int:
    """The rules of `_LOOSE` that `_candidates` runs on `text`, as a mask."""
    digits = _DIGIT.search(text) is not None
    return sum(
        1 << bit
        for bit, (_, rule) in enumerate(_LOOSE)
        if (digits or rule.kind in _DIGITLESS_KINDS)
        and all(gate.search(text) for gate in rule.gates)
    )


# Kinds whose value may hold facts of other kinds, read too ("it says 'order PED-4471
# cancelled'": the quoted message, and the order inside it).
NESTING_KINDS = frozenset({"quote"})
# Kinds that give way to any other kind's reading on one of their characters ("Pedido
# PED-4471" is an order, not a name; "acabada en 0913 dos veces" a card, not a count).
YIELDING_KINDS = frozenset({"named", "count"})


def scan(text: str) -> tuple[Fact, ...]:
    """Every pattern run over the whole of `text` (what `facts_of` caches)."""
    spans = sorted(_yielded(list(_candidates(text))), key=lambda c: (c[0], -(c[1] - c[0]), c[3]))
    facts: list[Fact] = []
    end_of_last = -1
    for start, end, kind, _ in spans:
        if start >= end_of_last:
            facts.append(Fact(kind, text[start:end], label_before(text, start)))
            if kind not in NESTING_KINDS:
                end_of_last = end
    return tuple(dedupe(facts))


def _yielded(
    found: list[tuple[int, int, FactKind, int]],
) -> list[tuple[int, int, FactKind, int]]:
    """`found` without the candidates of `YIELDING_KINDS` another kind's overlaps."""
    if not any(kind in YIELDING_KINDS for _, _, kind, _ in found):
        return found
    others = [(start, end) for start, end, kind, _ in found if kind not in YIELDING_KINDS]
    return [
        c
        for c in found
        if c[2] not in YIELDING_KINDS or not any(s < c[1] and c[0] < e for s, e in others)
    ]


def _candidates(text: str) -> Iterable[tuple[int, int, FactKind, int]]:
    """Every match of every pattern; a pattern is not run on a text without its gates."""
    lowered: str | None = None
    digit = _DIGIT.search(text)
    at = digit.start() if digit else 0
    run = max(map(len, _DIGITS.findall(text, at)), default=0) if digit else 0
    rules = _RANKED if run else _RANKED_DIGITLESS
    runs: list[int] | None = None  # where each run of digits starts
    for rank, rule, needed, gates in rules:
        if needed > run:
            continue
        # A plain loop: `all()` over a generator costs more than most gates.
        passed = True
        for gate, led in gates:
            if gate.search(text, at if led else 0) is None:
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
        elif rule.at_runs and runs is None:
            runs = [digits.start() for digits in _DIGITS.finditer(text, at)]
        yield from _matches(text, rank, rule, first, lowered, runs)


def _matches(
    text: str,
    rank: int,
    rule: _Rule,
    first: int,
    lowered: str | None = "",
    runs: list[int] | None = None,
) -> Iterable[tuple[int, int, FactKind, int]]:
    """The candidates of one rule, its gates aside (`lowered`: `text` lowered, or "";
    `runs`: where its runs of digits start, or None)."""
    kind = rule.kind
    for match in _found(text, rule, first, lowered, runs):
        start, end = match.span(rule.group)
        end = _strip_trailing(text, start, end, kind)
        if end > start and _bounded(text, start, end) and _plausible(kind, text[start:end]):
            yield start, end, kind, rank


def _found(
    text: str, rule: _Rule, first: int, lowered: str | None, runs: list[int] | None
) -> Iterator[re.Match[str]]:
    """The pattern's matches from `first` on, as `finditer` finds them: lookbehinds and
    \\b still see before `first`. It is tried only where a match may start when the rule
    says where: at a head in the lowered text, or where a run of digits starts."""
    if rule.heads is not None and lowered:
        starts: Iterable[int] = (head.start() for head in rule.heads.finditer(lowered, first))
    elif rule.at_runs and runs is not None:
        starts = runs  # the rule has no start words: `first` is 0
    else:
        yield from rule.pattern.finditer(text, first)
        return
    end = first
    for start in starts:
        if start >= end:
            match = rule.pattern.match(text, start)
            if match is not None:
                end = match.end()
                yield match


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


@lru_cache(maxsize=FOLD_TEXTS)
def _squash(value: str) -> str:
    """Cached: `dedupe` sees the same required facts several times per fold."""
    return "".join(value.casefold().split())
