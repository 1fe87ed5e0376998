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

_EN_MONTH_START = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"


@dataclass(frozen=True, slots=True)
class _Rule:
    """One fact pattern, and `gates`: quick regexes each found in every text the pattern
    matches in. Most texts pass few gates, and the patterns (lookbehinds, word
    boundaries, long alternations, tried at every index) cost ~5 µs each per reply where
    a gate costs well under 1 µs; the fastest start with a literal (a lookbehind checks
    what came before it). `starts`, when set, finds lowered the start of every match;
    the pattern need not be run before the first one, nor at all without one."""

    kind: FactKind
    pattern: re.Pattern[str]
    gates: tuple[re.Pattern[str], ...]
    group: int = 0  # the capture group holding the value
    starts: re.Pattern[str] | None = None

    def admits(self, text: str) -> bool:
        """Whether `text` passes every gate and, with `starts`, holds a start (what
        `_candidates` checks inline, as one call for tests)."""
        lowered = _lowered(text)
        if not all(gate.search(text) for gate in self.gates):
            return False
        return self.starts is None or not lowered or self.starts.search(lowered) is not None


def _rule(
    kind: FactKind, pattern: str, *gates: str, group: int = 0, starts: str | None = None
) -> _Rule:
    return _Rule(
        kind,
        re.compile(pattern),
        tuple(map(re.compile, gates)),
        group,
        None if starts is None else re.compile(starts),
    )


_FIVE_DIGITS = r"\d\d\d\d\d"

# Order breaks ties between overlaps. Each gate's comment says what every match holds.
_PATTERNS: list[_Rule] = [
    _rule("url", r"\b(?:https?://|www\.)[^\s<>\"'`«»]+", r"://|www\."),
    _rule(
        "email",
        r"\b[\w.%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
        "@",
    ),
    # Four digits and a dash.
    _rule("date", r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:[12]\d|3[01]|0[1-9])\b", r"-(?<=\d\d\d\d-)"),
    # A digit, a separator, a digit.
    _rule(
        "date",
        rf"(?<![\d/.-]){_DAY}([/.-])(?:1[0-2]|0?[1-9])\1(?:\d{{4}}|\d{{2}})\b",
        r"[/.-](?<=\d[/.-])\d",
    ),
    # "de" and a month (the "de" is not folded, the month is).
    _rule(
        "date",
        rf"\b{_DAY}\s+de\s+{_ES_MONTH}(?:\s+(?i:de|del)\s+\d{{4}}(?![\d/-]))?\b",
        rf"de\s+{_ES_MONTH}",
    ),
    _rule(
        "date",
        rf"\b{_EN_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}(?![\d/-]))?",
        rf"{_EN_MONTH_START}[a-z]*\.?\s+\d",
    ),
    _rule(
        "date",
        rf"\b{_DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}\b(?:,?\s+\d{{4}}(?![\d/-]))?",
        _EN_MONTH_START,
        rf"\d(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH_START}",
    ),
    # A digit, a colon, a digit from 0 to 5 and another.
    _rule(
        "time",
        rf"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?{_AMPM})?(?![\d:])",
        r":(?<=\d:)[0-5]\d",
    ),
    _rule("time", rf"\b(?:1[0-2]|0?[1-9])\s?{_AMPM}", r"\d\s?(?i:[ap])"),
    # A symbol (all hold one of these four) or a code: three capitals, then a number.
    _rule(
        "amount",
        rf"(?:(?<!\w)(?:{_SYMBOL})|\b(?:{_CODE}))\s?(?:{_NUM})(?![\d%])",
        r"[$€£¥]|[A-Z][A-Z][A-Z]\s?\d",
    ),
    _rule(
        "amount",
        rf"(?<![\d.,])(?:{_NUM})\s?(?:{_SYMBOL}|(?:{_CODE}|{_WORD})\b)",
        rf"\d\s?(?:{_SYMBOL}|{_CODE}|{_WORD})",
    ),
    _rule(
        "percent",
        rf"(?<![\d.,])(?:{_NUM})\s?(?:%|(?i:por\s?ciento|percent|per\s?cent)\b)",
        r"\d\s?(?:%|(?i:por\s?ciento|percent|per\s?cent))",
    ),
    _rule("phone", r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\d)", r"\+\d"),
    _rule("phone", r"(?<![\d)])\(\d{3}\)\s?\d{3}[\s.-]?\d{4}(?!\d)", r"\(\d{3}\)"),
    _rule(
        "phone",
        r"(?<![\d.-])\d{3}[.-]\d{3}[.-]\d{4}(?![\d.-])",
        r"[.-](?<=\d\d\d[.-])\d\d\d[.-]\d\d\d\d",
    ),
    _rule(
        "phone",
        r"(?<![\d.,])[6789]\d{2}(?:[ .]\d{3}[ .]\d{3}|(?:[ .]\d{2}){3})(?![\d.,])",
        r"[6789]\d{2}[ .]\d{2}",
    ),
    # A postcode is part of an address only next to its city ("28028 Madrid") or named
    # ("CP 28028", "código postal 08001", "ZIP 94105"); a bare five-digit number is not.
    _rule(
        "postcode",
        r"(?<![\w.,-])\d{5}(?=\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñ]{2,})",
        _FIVE_DIGITS,
        r"\d{5}\s+[A-ZÁÉÍÓÚÑ]",
    ),
    # Five digits, after a label that starts the match.
    _rule(
        "postcode",
        r"(?i:\bc\.?\s?p\.?|c[oó]digo postal|zip(?: code)?|postcode)\s*:?\s*(\d{5})\b",
        _FIVE_DIGITS,
        group=1,
        starts=r"c\.?\s?p|c[oó]digo postal|zip|postcode",
    ),
    _rule(
        "id",
        r"(?<!\w)#(?=[A-Za-z0-9-]{0,40}\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*",
        r"#[A-Za-z0-9]",
    ),
    # A capital or digit, a dash, a capital or digit.
    _rule(
        "id",
        r"\b(?=[A-Z0-9-]{0,40}\d)(?=[A-Z0-9-]{0,40}[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+\b",
        r"-(?<=[A-Z0-9]-)[A-Z0-9]",
    ),
    # A letter or digit, a dash or underscore, two digits.
    _rule(
        "id",
        r"\b[A-Za-z][A-Za-z0-9]{0,11}[-_]\d{2,}(?:[-_][A-Za-z0-9]+)*\b",
        r"[-_](?<=[A-Za-z0-9][-_])\d\d",
    ),
    # Five or more capitals and digits with both in them have a capital next to a digit.
    _rule(
        "id",
        r"\b(?=[A-Z]{0,40}\d)(?=\d{0,40}[A-Z])[A-Z0-9]{5,}\b",
        r"[A-Z](?:(?<=[0-9].)|(?=[0-9]))",
    ),
    # One of the words, each found lowered by its start, then a digit and two more.
    _rule(
        "id",
        rf"\b{_ID_WORDS}\s*(?i:n[º°o]\.?|n[uú]m(?:ero)?\.?|number|no\.)?\s*[:#]?\s*"
        r"(\d[\w-]{2,})",
        r"\d[\w-]{2}",
        group=1,
        starts=r"ticket|tiquet|invoice|factura|pedido|orde|cas|expediente|incidencia|ref"
        r"|reserva|booking|albar|tracking|seguimiento|contra|p[oó]liza|policy|cuenta|account",
    ),
]
# Every kind but these is made of digits: a text without any skips their patterns.
_DIGITLESS_KINDS = frozenset({"url", "email"})
_RANKED = list(enumerate(_PATTERNS))
_RANKED_DIGITLESS = [(rank, rule) for rank, rule in _RANKED if rule.kind in _DIGITLESS_KINDS]
_DIGIT = re.compile(r"\d")
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


def _lowered(text: str) -> str:
    """`text` lowercased; "" when it holds one of `_ODD_CASE`, the only characters that
    match an ASCII letter ignoring case but do not lower to it, or lower to two."""
    return "" if any(char in text for char in _ODD_CASE) else text.lower()


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
    haystack = _haystack(text)
    return [fact for fact in facts if not haystack.holds(fact.value)]


def _present(value: str, text: str) -> bool:
    """Whether `_value_pattern(value)` finds `value` in `text` (always, for a blank one)."""
    return _haystack(text).holds(value)


class _Haystack:
    """A text the guard looks for fact values in, with the answers given so far.

    The answer is always that of the value's pattern (`_value_pattern`) searched in the
    text; two shortcuts find most answers without that search, which scans the whole
    summary. A *no*: a plain value (`_squashed_value`) that is not even in the text
    lowercased without its whitespace cannot match, because every character a plain
    character matches, ignoring case, lowers to what it lowers to (unless the text holds
    one of `_ODD_CASE`; then this shortcut is off). A *yes*: where the value lowercased
    first appears in the text lowercased, the pattern matching right there confirms it.
    """

    __slots__ = ("answers", "lowered", "squashed", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower()
        odd = any(char in text for char in _ODD_CASE)
        self.squashed = None if odd else "".join(self.lowered.split())
        self.answers: dict[str, bool] = {}

    def holds(self, value: str) -> bool:
        answer = self.answers.get(value)
        if answer is None:
            answer = self.answers[value] = self._search(value)
        return answer

    def _search(self, value: str) -> bool:
        pattern = _value_pattern(value)
        if pattern is None:
            return True
        squashed = _squashed_value(value)
        if squashed is not None and self.squashed is not None and squashed not in self.squashed:
            return False
        # An index into `text` too, unless lowering changed its length (only "İ" does):
        # the match there confirms it either way.
        start = self.lowered.find(value.lower())
        if start >= 0 and pattern.match(self.text, start) is not None:
            return True
        return pattern.search(self.text) is not None


@lru_cache(maxsize=64)
def _haystack(text: str) -> _Haystack:
    """Cached: one fold checks the same facts against the same few texts several times."""
    return _Haystack(text)


# Characters that match a plain one ignoring case but do not lower to it: "İ" lowers to
# two characters, "ı" matches "i" and "ſ" matches "s".
_ODD_CASE = ("\u0130", "\u0131", "\u017f")
# Characters each of which matches, ignoring case, only characters that lower to what it
# lowers to (besides `_ODD_CASE`): printable ASCII and Latin-1 to Latin Extended-A, but
# for the micro sign (it matches the Greek mu), and some punctuation.
_LATIN = frozenset(map(chr, [*range(0x21, 0x7F), *range(0xA1, 0x180)]))
_PLAIN = (_LATIN - {"\u00b5", *_ODD_CASE}) | frozenset("€«»“”‘’…–—")


@lru_cache(maxsize=4096)
def _squashed_value(value: str) -> str | None:
    """`value` lowercased without whitespace when all its characters are `_PLAIN`."""
    squashed = "".join(value.split())
    return squashed.lower() if _PLAIN.issuperset(squashed) else None


@lru_cache(maxsize=4096)
def _value_pattern(value: str) -> re.Pattern[str] | None:
    """`value` as a regex: any whitespace between its characters, not inside a longer
    word; None when it is all whitespace (always present). Cached: the guard checks the
    same facts against every fold, and building the pattern char by char cost more than
    the search."""
    chars = [c for c in value if not c.isspace()]
    if not chars:
        return None
    body = r"\s*".join(re.escape(c) for c in chars)
    before = r"(?<!\w)" if _is_word(chars[0]) else ""
    after = r"(?!\w)" if _is_word(chars[-1]) else ""
    return re.compile(before + body + after, re.IGNORECASE)


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


@lru_cache(maxsize=8192)
def _squash(value: str) -> str:
    """Cached: `dedupe` sees the same required facts several times per fold."""
    return "".join(value.casefold().split())
