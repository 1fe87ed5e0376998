"""The fact patterns `memory.facts.extract` runs: one `_Rule` per shape of hard fact.

The first rules (ids, dates, times, amounts, percentages, phones, emails, URLs,
postcodes; among the ids a DNI written with dots, a MAC address, a serial number or IMEI
after its label, and a labelled id with a slash, "factura 2026/118"; among the dates a
day and month after a word that introduces them, "el 14/03") come first;
`memory.facts.kinds` adds the kinds users give about themselves and their systems
(IBANs, account numbers, IPs, hosts, tracking numbers, addresses, plates, names and
companies). Order breaks ties between overlapping matches of the same span. The last
rule reads a bare number of four digits or more ("it says 49106 now": a meter reading)
where no other kind does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FactKind = str


@dataclass(frozen=True, slots=True)
class Fact:
    """One hard fact: its kind, its value verbatim, and what the text says it is."""

    kind: FactKind
    value: str
    label: str = field(default="", compare=False)


# Characters that match a plain one ignoring case but do not lower to it: "İ" lowers to
# two characters, "ı" matches "i" and "ſ" matches "s".
_ODD_CASE = ("\u0130", "\u0131", "\u017f")


def _lowered(text: str) -> str:
    """`text` lowercased; "" when it holds one of `_ODD_CASE`, the only characters that
    match an ASCII letter ignoring case but do not lower to it, or lower to two."""
    return "" if any(char in text for char in _ODD_CASE) else text.lower()


_NUM = r"\d{1,3}(?:[.,\u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOL = r"[A-Z]{1,3}\$|[$€£¥]"  # "NZ$", "HK$", "US$", "R$": a country's dollar
_CODE = (
    r"USD|EUR|MXN|GBP|ARS|COP|CLP|PEN|BRL|CAD|AUD|JPY|CHF|UYU|BOB|VES|GTQ|CRC|DOP|PYG|HNL"
    r"|NIO|PAB"
)
_WORD = (
    r"(?i:euros?|d[oó]lares|dollars?|pesos?|libras?|pounds?|soles|bol[ií]vares|c[eé]ntimos"
    r"|centavos|cents|pavos|pelas|lucas|bucks|quid)"
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
    r"|contract|p[oó]liza|policy|cuenta|account|part|pieza|recambio|model|modelo|c[oó]digo"
    r"|code)"
)

_EN_MONTH_START = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
# A time zone after a time ("09:40 PST", "14:00 CET", "10:30 UTC+1"): part of the time.
_ZONE = (
    r"(?:UTC|GMT|CET|CEST|WET|WEST|BST|IST|PST|PDT|MST|MDT|CST|CDT|EST|EDT|AEST)(?:[+-]\d{1,2})?"
)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One fact pattern, and `gates`: quick regexes each found in every text the pattern
    matches in. Most texts pass few gates, and the patterns (lookbehinds, word
    boundaries, long alternations, tried at every index) cost ~5 µs each per reply where
    a gate costs well under 1 µs; the fastest start with a literal (a lookbehind checks
    what came before it). `starts`, when set, finds lowered the start of every match;
    the pattern need not be run before the first one, nor at all without one. Its words
    start with a letter, their word boundary checked behind it ("p(?<=\\bp)art", not
    "\\bpart": the same starts): the engine then skips each index whose letter starts no
    word, where one word led by `\\b` made it try every word at every index (the
    id words: 7.4 µs a reply, now 2.6)."""

    kind: FactKind
    pattern: re.Pattern[str]
    gates: tuple[re.Pattern[str], ...]
    group: int = 0  # the capture group holding the value
    starts: re.Pattern[str] | None = None
    # Words, lowered, one of which starts every match, none holding where another match
    # may start: the pattern is tried only where one is (a pattern led by `\b` is
    # otherwise tried at every index of the text).
    heads: re.Pattern[str] | None = None
    # Every match starts a run of digits (a digit, none before it): the pattern is tried
    # only where one starts.
    at_runs: bool = False

    def admits(self, text: str) -> bool:
        """Whether `text` passes every gate and, with `starts`, holds a start (what
        `_candidates` checks inline, as one call for tests)."""
        lowered = _lowered(text)
        if not all(gate.search(text) for gate in self.gates):
            return False
        return self.starts is None or not lowered or self.starts.search(lowered) is not None


def _rule(
    kind: FactKind,
    pattern: str,
    *gates: str,
    group: int = 0,
    starts: str | None = None,
    heads: str | None = None,
    at_runs: bool = False,
) -> _Rule:
    return _Rule(
        kind,
        re.compile(pattern),
        tuple(map(re.compile, gates)),
        group,
        None if starts is None else re.compile(starts),
        None if heads is None else re.compile(heads),
        at_runs,
    )


_FIVE_DIGITS = r"\d\d\d\d\d"

# Order breaks ties between overlaps. Each gate's comment says what every match holds.
BASE_RULES: list[_Rule] = [
    _rule("url", r"\b(?:https?://|www\.)[^\s<>\"'`«»]+", r"://|www\."),
    _rule(
        "email",
        r"\b[\w.%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
        "@",
    ),
    # Four digits and a dash.
    _rule(
        "date",
        r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:[12]\d|3[01]|0[1-9])\b",
        r"-(?<=\d\d\d\d-)",
        at_runs=True,
    ),
    # A digit, a separator, a digit.
    _rule(
        "date",
        rf"(?<![\d/.-]){_DAY}([/.-])(?:1[0-2]|0?[1-9])\1(?:\d{{4}}|\d{{2}})\b",
        r"[/.-](?<=\d[/.-])\d",
        at_runs=True,
    ),
    # A day and a month without a year ("el 14/03", "on 12/5", "fecha: 3/06"): only after
    # a word that introduces a date, and with a two-digit day or month, so a fraction
    # ("the 3/4 split", "el 1/2 kilo") is none.
    _rule(
        "date",
        r"(?i:\b(?:el|del|al|d[ií]a|desde|hasta|para|antes del|on|the|from|until|since|by"
        r"|before|after|fecha|date)\s*:?\s+)"
        rf"((?:[12]\d|3[01]|0[1-9])/(?:1[0-2]|0?[1-9])|{_DAY}/(?:1[0-2]|0[1-9]))"
        r"(?![\d/.-]|[.,]\d)",
        r"\d/\d",
        group=1,
    ),
    # A US date, month first, when the day cannot be a month ("DOB 04/17/1979").
    _rule(
        "date",
        r"(?<![\d/.-])(?:1[0-2]|0?[1-9])([/.-])(?:1[3-9]|2\d|3[01])\1(?:\d{4}|\d{2})\b",
        r"[/.-](?<=\d[/.-])\d",
        at_runs=True,
    ),
    # "de" and a month (the "de" is not folded, the month is).
    _rule(
        "date",
        rf"\b{_DAY}\s+de\s+{_ES_MONTH}(?:\s+(?i:de|del)\s+\d{{4}}(?![\d/-]))?\b",
        rf"de\s+{_ES_MONTH}",
        at_runs=True,
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
        at_runs=True,
    ),
    # A digit, a colon, a digit from 0 to 5 and another.
    _rule(
        "time",
        rf"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?{_AMPM})?(?![\d:])"
        rf"(?:\s{_ZONE}\b)?",
        r":(?<=\d:)[0-5]\d",
        at_runs=True,
    ),
    _rule("time", rf"\b(?:1[0-2]|0?[1-9])\s?{_AMPM}", r"\d\s?(?i:[ap])", at_runs=True),
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
        at_runs=True,
    ),
    _rule(
        "percent",
        rf"(?<![\d.,])(?:{_NUM})\s?(?:%|(?i:por\s?ciento|percent|per\s?cent)\b)",
        r"\d\s?(?:%|(?i:por\s?ciento|percent|per\s?cent))",
        at_runs=True,
    ),
    _rule("phone", r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\d)", r"\+\d"),
    _rule("phone", r"(?<![\d)])\(\d{3}\)\s?\d{3}[\s.-]?\d{4}(?!\d)", r"\(\d{3}\)"),
    _rule(
        "phone",
        r"(?<![\d.-])\d{3}[.-]\d{3}[.-]\d{4}(?![\d.-])",
        r"[.-](?<=\d\d\d[.-])\d\d\d[.-]\d\d\d\d",
        at_runs=True,
    ),
    _rule(
        "phone",
        r"(?<![\d.,])[6789]\d{2}(?:[ .]\d{3}[ .]\d{3}|(?:[ .]\d{2}){3})(?!\d|[.,]\d)",
        r"[6789]\d{2}[ .]\d{2}",
        at_runs=True,
    ),
    # A Spanish landline of a two-digit province code ("91 123 45 67", Madrid; "93 …").
    _rule(
        "phone",
        r"(?<![\d.,])9[1-8][ .]\d{3}(?:[ .]\d{2}){2}(?!\d|[.,]\d)",
        r"9[1-8][ .]\d\d\d[ .]",
        at_runs=True,
    ),
    # A national number: the trunk 0 then groups ("0117 496 0321", "07700 900218",
    # "01 23 45 67 89", "011 4321-5678"); ten to twelve digits (`_plausible`), so a date
    # or a time is none.
    _rule(
        "phone",
        r"(?<![\d.,:/-])(?<!\d\s)0(?:\d{1,4}(?:[ .-]\d{3,8}){1,3}|\d(?:[ .]\d\d){4})"
        r"(?![\d.,:/-]?\d)",
        r"0\d{1,4}[ .-]\d\d",
        at_runs=True,
    ),
    # A postcode is part of an address only next to its city ("28028 Madrid") or named
    # ("CP 28028", "código postal 08001", "ZIP 94105"); a bare five-digit number is not.
    _rule(
        "postcode",
        r"(?<![\w.,-])\d{5}(?=\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñ]{2,})",
        _FIVE_DIGITS,
        r"\d{5}\s+[A-ZÁÉÍÓÚÑ]",
        at_runs=True,
    ),
    # A UK postcode after its label ("postcode SW1A 1AA").
    _rule(
        "postcode",
        r"(?i:\bpost\s?code|zip(?: code)?|c\.?\s?p\.?|c[oó]digo postal)\s*:?\s*"
        r"([A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2})(?![\w-])",
        r"\d[A-Z][A-Z]",
        group=1,
        starts=r"post|zip|c\.?\s?p|c[oó]digo postal",
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
    # A Spanish DNI written with dots ("44.556.677-K").
    _rule(
        "id",
        r"(?<![\w.])\d{1,2}\.\d{3}\.\d{3}-?[A-Za-z](?!\w)",
        r"\d\.\d\d\d\.\d\d\d",
        at_runs=True,
    ),
    # A MAC address ("00:1A:2B:3C:4D:5E"): six hex pairs, no IP.
    _rule(
        "id",
        r"(?<![\w:])[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}(?![\w:])",
        r"[0-9A-Fa-f][:-][0-9A-Fa-f]{2}[:-]",
    ),
    # A serial number or IMEI after its label ("IMEI 356938035643809", "S/N WM8K-22019").
    _rule(
        "id",
        r"(?i:\b(?:imei|n[uú]mero de serie|serial(?: number| no\.?)?|s/n|sn))\s*[:#]?\s*"
        r"([A-Z0-9](?=[A-Z0-9-]{0,40}\d)[A-Z0-9-]{5,}[A-Z0-9])(?![\w-])",
        r"[A-Z0-9][A-Z0-9-]{6}",  # the value: seven or more capitals, digits and dashes
        group=1,
        starts=r"imei|n[uú]mero de serie|serial|s/n|s(?<=\bs)n\b",
    ),
    # Capitals, a space, six digits or more ("RA 40918273", "MRN 00482913"); a UK VAT
    # number in its groups ("GB 284 1193 56").
    # (a label that names its value is no part of it: "IMEI 3569…", "DNI 4455…")
    _rule(
        "id",
        r"\b(?!(?:IMEI|DNI|NIE|NIF|CIF|CP|SN|REF|PIN|CUPS|IBAN)\b)[A-Z]{2,4}\s\d{6,}\b",
        r"[A-Z]\s\d{6}",
    ),
    # Capitals, then groups of digits with seven or more in all ("MV 2026 04418").
    _rule(
        "id",
        r"\b(?!(?:IMEI|DNI|NIE|NIF|CIF|CP|SN|REF|PIN|CUPS|IBAN|GB)\b)[A-Z]{2,4}"
        r"(?=(?:\s?\d){7})(?:\s\d{2,6}){2,4}(?![\w/:-]|[.,]\d)",
        r"[A-Z]\s\d\d+\s\d\d",
    ),
    # A software version, "v" first or after its label ("v2.14.3", "firmware 3.2.1").
    _rule(
        "version",
        r"(?<![\w.])[vV]\d{1,3}(?:\.\d{1,4}){1,3}(?![\w]|\.\d)",
        r"[vV]\d{1,3}\.\d",
    ),
    _rule(
        "version",
        r"(?i:\b(?:versi[oó]n|version|firmware|build))\s*:?\s*(\d{1,3}(?:\.\d{1,4}){1,3})"
        r"(?![\w]|\.\d)",
        r"\d\.\d",
        group=1,
        starts=r"versi[oó]n|firmware|build",
    ),
    _rule(
        "id",
        r"\bGB\s?\d{3}\s?\d{4}\s?\d{2}(?:\s?\d{3})?\b",
        r"GB\s?\d\d\d",
    ),
    # Twelve letters and digits or more with a run of five digits ("REGAGE26e00041972210").
    _rule(
        "id",
        r"\b(?=[A-Za-z0-9]{0,60}\d{5})(?=[A-Za-z0-9]{0,60}[A-Za-z])[A-Za-z0-9]{12,}\b",
        r"\d\d\d\d\d",
    ),
    # A capital or digit, a dash, a capital or digit.
    _rule(
        "id",
        r"\b(?=[A-Z0-9-]{0,40}\d)(?=[A-Z0-9-]{0,40}[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+(?:/\d+)?\b",
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
        r"(\d[\w-]{2,}(?:/[\w-]+|\.\d+)*)",
        r"\d[\w-]{2}",
        group=1,
        starts=r"ticket|tiquet|invoice|factura|pedido|orde|cas|expediente|incidencia|ref"
        r"|reserva|booking|albar|tracking|seguimiento|contra|p[oó]liza|policy|cuenta|account"
        r"|p(?<=\bp)art(?![a-z])|pieza|recambio|m(?<=\bm)odel|c[oó]digo|c(?<=\bc)ode(?![a-z])",
        # each id word by its start, grouped by first letter (the engine then tries one
        # alternative per letter): all letters, so no match starts inside one
        heads=r"c(?:as|ontra|uenta|[oó]digo|ode)|p(?:edido|[oó]liza|olicy|art|ieza)"
        r"|t(?:icket|iquet|racking)|i(?:nvoice|ncidencia)|factura|orde|expediente"
        r"|re(?:f|serva|cambio)|booking|a(?:lbar|ccount)|seguimiento|model",
    ),
    # Two capitals, a space, three or four digits: a flight ("AC 849 from heathrow", "IB
    # 3166"), a room, a box. Not a word of a shouted sentence (a capital word before it,
    # or a short word such as "DE 150", "EN 2025"), a year, a longer run or an amount.
    _rule(
        "id",
        r"(?<![A-Z]\s)\b(?!(?:AL|AN|AS|AT|BE|BY|CP|DE|DO|EL|EN|ES|GO|HA|HE|IF|IN|IS|IT"
        r"|LA|LE|LO|ME|MI|MY|NO|OF|OK|ON|OR|SE|SI|SO|SU|TE|TO|TU|UN|UP|US|WE|YA|YO)\b)"
        r"[A-Z]{2}\s(?!(?:19|20)\d\d(?!\d))\d{3,4}(?![\w/:-]|[.,]\d|\s\d)"
        r"(?!\s?(?:[$€£¥]|(?i:eur|usd|gbp|d[oó]lar|dollar|peso|pound|libra)))",  # an amount
        r"[A-Z]\s\d\d\d",
    ),
    # A bare number of four digits or more, said without a label ("it says 49106 now", "me
    # sale 1500"): a meter reading, a limit, a reference. Last, so any other kind read on
    # the same digits wins (a phone, a date, an amount, a postcode); a year is not one.
    _rule(
        "number",
        r"(?<![\w.,:/#+£$€-])(?!(?:19|20)\d\d(?!\d))\d{4,}(?!\w|[.,:/-]\d)",
        r"\d\d\d\d",
        at_runs=True,
    ),
]
