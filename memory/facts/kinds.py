"""Fact kinds users give about themselves and their systems, Spanish and English.

- ``iban``: ``ES91 2100 0418 4502 0005 1332`` (with or without spaces; at its country's
  length even with wrong check digits, a user's typo kept as said);
- ``account``: the number after an account, customer, policy or contract label ("número de
  cliente 48213", "mi cuenta es 12345678", "account number 1234-5678-9012", "póliza
  0045-778"), bank account numbers included;
- ``card``: a payment card's last digits ("card ending 4242", "tarjeta acabada en 7725");
- ``ip``: IPv4 and IPv6 addresses (checked with `ipaddress`);
- ``host``: host and domain names (``ns1.example.net``, ``shop.example.es``) on a known
  top-level domain: file names (``config.php``, ``informe.pdf``) are not hosts;
- ``tracking``: parcel numbers (UPU ``RR123456789ES``, UPS ``1Z…``, or after a label);
- ``address``: street and number ("calle Alcalá 214", "221B Baker Street"), with a
  Spanish address's floor, postcode and town ("calle Alcalá 214, 3.º B, 28028 Madrid") and an
  English address's town and postcode when they follow ("14 Gloucester Road, Bristol
  BS7 8AE", "1 Market St, San Francisco, CA 94105");
- ``plate``: licence plates (Spanish ``1234 ABC``, British ``KX19 ABC``; any after
  "matrícula"/"plate");
- ``name`` / ``company``: what a user calls themselves ("soy Marta Ruiz", "my name is…",
  "de la empresa Acme S.L.", "I'm calling from Acme Ltd").
"""

from __future__ import annotations

import ipaddress

from memory.facts.named import named_ok
from memory.facts.rules import _Rule, _rule


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CAP = r"[A-ZÁÉÍÓÚÑÜ]"
_NAME_WORD = rf"{_CAP}[a-záéíóúñüàèïç]+(?:-{_CAP}[a-záéíóúñüàèïç]+)?"
_PARTICLE = r"(?:de|del|de la|de los|y|van|von|da|di|le|la)"
_PERSON = rf"{_NAME_WORD}(?:[ ](?:{_PARTICLE}[ ])?{_NAME_WORD}){{0,3}}"
_ORG_WORD = r"[A-ZÁÉÍÓÚÑÜ0-9][\wáéíóúñü&'.-]*[\wáéíóúñü]|[A-Z]"
_STREET_WORD = r"[A-ZÁÉÍÓÚÑÜ][\wáéíóúñü'.-]*"
# A Spanish address's floor and door ("3.º B", "2ºA", "5º 2ª", "4º izda.", "bajo", "piso
# 2", "pta 9", "esc. B") and town.
_FLOOR = (
    r"(?:\d{1,2}\.?\s?[º°ª](?:\s?-?\s?(?:\d{1,2}\s?[º°ª]|izq(?:uierda)?\.?|izq?da\.?|dcha\.?"
    r"|derecha|[A-Za-z](?!\w)))?|bajo(?:\s[A-Za-z](?!\w))?"
    r"|(?i:piso|planta|puerta|pta\.?|esc(?:alera)?\.?)(?:\s?\d{1,2}(?:\s?[º°ª])?|\s[A-Za-z])(?!\w))"
)
_TOWN_WORD = r"[A-ZÁÉÍÓÚÑÜ][\wáéíóúñü'-]+"
_TOWN = rf"{_TOWN_WORD}(?:\s(?:de\s(?:la\s|las\s|los\s)?|del\s)?{_TOWN_WORD}){{0,2}}"
_LEGAL = (
    r"S\.?L\.?U?\.?|S\.?A\.?U?\.?|S\.?Coop\.?|Ltd\.?|Limited|LLC|Inc\.?|GmbH|Corp\.?"
    r"|Co\.|plc|PLC|SAS|S\.?C\.?|B\.?V\.?"
)
_ORG = rf"(?:{_ORG_WORD})(?:[ ](?:(?:de|del|y|and|&|of)[ ])?(?:{_ORG_WORD})){{0,4}}"
# Top-level domains a host may end in. Not py, md, rs, sh, pl: file extensions first.
_TLDS = _words(
    """
    com net org es io dev app info biz eu uk de fr it pt nl be ch at se no dk fi ie pl
    mx ar cl co pe uy ve ec bo py br us ca au nz jp cn in ru cat gal eus tech cloud
    online site store shop xyz me tv ai local lan internal int gov edu mil name pro mobi
    travel web host email digital agency studio solutions services company
    """
) - {"py", "pl"}
# Three capitals after four digits that are a currency, not a plate ("2024 USD").
_CURRENCIES = _words(
    """
    USD EUR MXN GBP ARS COP CLP PEN BRL CAD AUD JPY CHF
    """
)
# Capitalised words after "soy"/"I'm"/"this is" that are not a name.
_NOT_NAMES = _words(
    """
    Calling Writing Having Trying Not Sorry Here Back Still Going Looking Fine Okay Ok
    The A An From With In On At Just So Very Really Also Again Glad Happy Sure Afraid
    Interested Cliente Usuario Socio Nuevo Nueva El La Los Las Un Una De Del Yo Muy Tan
    Ya Aquí Otra Otro English Spanish Español Española Customer Client User Member New
    Your Their
    """
)

_NAME_INTRO = (
    r"(?i:\bsoy|\bme llamo|\bmi nombre es|\bmy name is|\bmy name's|\bi am|\bi'm|\bi’m"
    r"|\bthis is|\bnombre:|\bname:|\bles habla|\bte habla|\ba nombre de)"
)
_COMPANY_INTRO = (
    r"(?i:\bempresa|\bcompañ[ií]a|\bcompany|\bcalling from|\bwriting from|\bi work (?:for|at)"
    r"|\bwe are|\bwe're|\bsomos|\btrabajo (?:en|para)|\bon behalf of|\ben nombre de"
    r"|\bfrom the company|\bcliente de empresa)"
)
_ACCOUNT_LABEL = (
    r"(?i:\b(?:n[uú]mero|n\.?[º°o]|num\.?|c[oó]digo)\s+de\s+)?"
    r"(?i:\b(?:cuenta(?:\s+bancaria)?|cliente|socio|abonado|p[oó]liza|contrato|customer"
    r"|client|account|bank account|policy|contract|member(?:ship)?|suministro|cups))"
    r"(?i:\s+(?:number|n[uú]mero|no\.?|n[º°o]\.?|id|num\.?|#))?"
    r"(?i:\s+(?:es|is|era|was|será|would be))?"
    r"(?i:\s+(?:el|la|the))?\s*[:#=]?\s*"
)

# What may come between a label and its value on one line: no line break, no closing
# quote (`memory.facts.extract`'s sealed lines rest on that).
_BETWEEN = r"""[\w \t,.:;?¿!¡'"()/#-]{0,60}?"""

KIND_RULES: list[_Rule] = [
    # Two capitals, two digits (the check digits), then groups of four.
    _rule(
        "iban",
        r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b",
        r"[A-Z][A-Z]\d\d",
    ),
    _rule(
        "account",
        _ACCOUNT_LABEL + r"(\d(?:\d|[ -](?=\d)){3,30})(?![\w-])",
        r"\d\d\d",
        group=1,
        starts=r"cuenta|client|socio|abonado|p[oó]liza|contra|customer|account|policy|member"
        r"|suministro|cups",
    ),
    # The same labels before a code of capitals and digits ("account ID is ACC-58812-QP").
    _rule(
        "account",
        _ACCOUNT_LABEL + r"((?=[A-Z0-9-]{0,30}\d{3})[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)(?![\w-])",
        r"[A-Z][A-Z0-9]*-",
        group=1,
        starts=r"cuenta|client|socio|abonado|p[oó]liza|contra|customer|account|policy|member"
        r"|suministro|cups",
    ),
    # The last digits of a payment card, kept as said ("card ending 4242", "tarjeta
    # acabada en 4242"): what a refund or a charge is looked up by.
    _rule(
        "card",
        r"(?i:\b(?:card|tarjeta|visa|mastercard|amex)(?:[ ,]+[a-záéíóúñ']+){0,4}?[ ,]+(?:ending"
        r"|ends|acabada|terminada|acaba"
        r"|termina)(?:\s+(?:in|with|en))?)\s*[:#]?\s*(\d{4})(?![\w-])",
        r"\d\d\d\d",
        group=1,
        starts=r"card|tarjeta|visa|mastercard|amex",
    ),
    _rule(
        "ip",
        r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)(?:/\d{1,2}(?![\d.]))?(?![\w-])",
        r"\d\.\d",
        at_runs=True,
    ),
    _rule(
        "ip",
        # a digit somewhere in it: "::A" or "ab:cd:ef" is text (and digitless texts
        # skip the digit kinds' rules, so a full scan and a gated one agree)
        # (an SPF record's "ip6:" before it; a network's prefix length after it, its last
        # groups "::" then: "2a0c:5a80:3f12::/48")
        r"(?:(?<![\w:])|(?<=ip6:))(?=[0-9A-Fa-f:]*\d)(?:(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}"
        r"|(?:[0-9A-Fa-f]{1,4}:){1,7}:(?=/\d))(?:/\d{1,3})?(?![\w:])",
        r"[0-9A-Fa-f]?:[0-9A-Fa-f:]",
    ),
    _rule("tracking", r"\b[A-Z]{2}\d{9}[A-Z]{2}\b", r"\d{9}[A-Z]"),
    _rule("tracking", r"\b1Z[0-9A-Z]{16}\b", r"1Z"),
    _rule(
        "tracking",
        r"(?i:\b(?:n[uú]mero\s+de\s+)?(?:seguimiento|tracking(?:\s+number)?|localizador"
        r"|n[uú]mero\s+de\s+env[ií]o|env[ií]o))(?i:\s+(?:es|is|el|the))*\s*[:#]?\s*"
        r"([A-Z0-9][A-Z0-9-]{7,34}[A-Z0-9])\b",
        r"\d\d",
        group=1,
        starts=r"seguimiento|tracking|localizador|env[ií]o",
    ),
    _rule(
        "address",
        r"(?i:\b(?:calle|c/|avenida|avda\.|av\.|paseo|plaza|pza\.|camino|carretera|ctra\."
        r"|ronda|traves[ií]a|pasaje|glorieta|r[uú]a|carrer|pol[ií]gono))\s+"
        rf"(?:(?:{_PARTICLE}|el|los|las)\s+)*{_STREET_WORD}(?:\s+(?:(?:{_PARTICLE}|el|los|las)\s+)*"
        rf"{_STREET_WORD}){{0,4}},?\s+(?:n[º°o]\.?\s*)?\d{{1,4}}(?:\s?[A-Za-z](?!\w))?"
        # its floor and door, postcode and town when they follow ("214, 3.º B, 28028 Madrid",
        # "31, 18012 Granada, 2ºB")
        rf"(?:,\s?{_FLOOR}){{0,2}}(?:,?\s\d{{5}}(?!\d)(?:\s{_TOWN}(?:,\s?{_FLOOR})?)?)?",
        r"\d",
        starts=r"calle|c/|av|paseo|plaza|pza|camino|carretera|ctra|ronda|traves|pasaje|glorieta"
        r"|r[uú]a|carrer|pol[ií]gono",
    ),
    _rule(
        "address",
        r"(?:\b(?:Unit|Flat|Apt\.?|Apartment|Suite)\s[0-9A-Z]{1,4},?\s)?"
        r"\b\d{1,5}[A-Z]?\s+(?:(?:N|S|E|W|NE|NW|SE|SW)\.?\s+)?(?:[A-Z][a-z]+\s+){1,3}"
        r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?"
        r"|Lane|Ln\.?|Boulevard|Blvd\.?|Drive|Dr\.?|Way|Court|Ct\.?|Place|Pl\.?|Square"
        r"|Terrace|Close|Crescent)(?!\w)"
        # its town and postcode when they follow: UK ("Bristol BS7 8AE"), US ("San
        # Francisco, CA 94105"), Irish ("Dublin 8, D08 X2F4")
        r"(?:(?:,\s(?:[A-Z][a-z]+\s){0,2}[A-Z][a-z]+(?:\s\d{1,2})?){1,2},?\s"
        r"(?:[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}|[A-Z]{2}\s\d{5}(?:-\d{4})?"
        r"|[A-Z]\d{2}\s?[A-Z0-9]{4})(?![\w-]))?",
        r"\d[A-Z]?\s+[A-Z]",
    ),
    _rule(
        "plate",
        r"(?i:\b(?:matr[ií]cula|placa|licen[cs]e plate|number plate|plate|registration))"
        r"(?i:\s+(?:es|is|del coche|of the car|n[uú]mero))*\s*[:#]?\s*"
        r"([A-Z0-9]{1,4}(?:[ -]?[A-Z0-9]{1,4}){1,3})\b",
        r"\d",
        group=1,
        starts=r"matr|placa|licen|plate|registration",
    ),
    _rule("plate", r"(?<![\w-])\d{4}[ -]?[A-Z]{3}(?![\w-])", r"\d\d\d\d[ -]?[A-Z]", at_runs=True),
    # A British plate: two letters, two digits, three letters ("KX19 ABC").
    _rule("plate", r"(?<![\w-])[A-Z]{2}\d{2}[ ]?[A-Z]{3}(?![\w-])", r"[A-Z]\d\d[ ]?[A-Z]"),
    _rule(
        "name",
        rf"{_NAME_INTRO}\s*,?\s+({_PERSON})",
        r"[A-ZÁÉÍÓÚÑÜ][a-z]",
        group=1,
        starts=r"soy|me llamo|mi nombre|my name|i am|i'm|i’m|this is|nombre:|name:|habla"
        r"|a nombre",
    ),
    _rule(
        "company",
        rf"{_COMPANY_INTRO}\s*:?\s+({_ORG}(?:,?\s(?:{_LEGAL}))?)(?!\w)",
        r"[A-ZÁÉÍÓÚÑÜ]",
        group=1,
        starts=r"empresa|compa|calling from|writing from|i work|we are|we're|somos|trabajo"
        r"|on behalf|en nombre|from the company|cliente de empresa",
    ),
    _rule(
        "host",
        r"(?i:(?<![\w@./-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\w@-]|\.\w)",
        r"\w\.(?i:[a-z][a-z])",
    ),
    # A bank's SWIFT/BIC code after its name on the same line ("the SWIFT? it's
    # BSCHESMMXXX", "BIC: NWBKGB2L"): bank, country (checked), place, branch.
    _rule(
        "bic",
        rf"(?i:\b(?:swift|bic))\b{_BETWEEN}(?<![\w-])"
        r"([A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?)(?![\w-])",
        r"(?i:swift|bic)",
        r"[A-Z]{6}[A-Z0-9]{2}",
        group=1,
        starts=r"swift|bic",
    ),
    # A handle: "@marta_codes" anywhere, or a line that is one token with a dot or an
    # underscore inside ("marta_codes", "lucia.design"): how a user answers "your
    # username?"; after a list dash or a label too, as a key-facts line renders it.
    _rule("username", r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])", r"@\w"),
    _rule(
        "username",
        r"(?m)^[ \t]*(?:-[ \t]+)?(?:\w[\w ]{0,29}:[ \t]*)?"
        r"([A-Za-z]{2}[A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+)[ \t]*$",
        r"[A-Za-z0-9][._][A-Za-z0-9]",
        group=1,
    ),
]

DIGITLESS_KINDS = frozenset(
    {"host", "name", "company", "address", "bic", "username", "person", "quote", "named"}
)


def plausible_kind(kind: str, value: str) -> bool:
    """Checks a pattern cannot make: a real address, a known domain, a name not a word."""
    if kind == "ip":
        return _is_ip(value)
    if kind == "host":
        return value.rsplit(".", 1)[-1].lower() in _TLDS and not value[0].isdigit()
    if kind == "plate":
        return value[-3:] not in _CURRENCIES and any(c.isalpha() for c in value)
    if kind in ("name", "person"):
        return value.split()[0] not in _NOT_NAMES
    if kind == "company":
        return value.split()[0] not in _NOT_NAMES
    if kind == "named":
        return named_ok(value)
    if kind == "account":
        return sum(c.isdigit() for c in value) >= 4
    if kind == "iban":
        return _iban_ok(value)
    if kind == "bic":
        return value[4:6] in _COUNTRIES
    if kind == "username":
        return value.rsplit(".", 1)[-1].lower() not in _FILE_TYPES
    return True


def _is_ip(value: str) -> bool:
    try:
        if "/" in value:
            ipaddress.ip_network(value, strict=False)
        else:
            ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# Each country's IBAN length (the SWIFT IBAN registry).
_IBAN_LENGTHS = {
    code: int(n)
    for code, n in (
        pair.split(":")
        for pair in _words(
            """
        AD:24 AE:23 AL:28 AT:20 AZ:28 BA:20 BE:16 BG:22 BH:22 BR:29 BY:28 CH:21 CR:22
        CY:28 CZ:24 DE:22 DK:18 DO:28 EE:20 EG:29 ES:24 FI:18 FO:18 FR:27 GB:22 GE:22
        GI:23 GL:18 GR:27 GT:28 HR:21 HU:28 IE:22 IL:23 IQ:23 IS:26 IT:27 JO:30 KW:30
        KZ:20 LB:28 LC:32 LI:21 LT:20 LU:20 LV:21 MC:27 MD:24 ME:22 MK:19 MR:27 MT:31
        MU:30 NL:18 NO:15 PK:24 PL:28 PS:29 PT:25 QA:29 RO:24 RS:22 SA:24 SC:31 SE:24
        SI:19 SK:24 SM:27 ST:25 SV:28 TL:23 TN:24 TR:26 UA:29 VA:22 VG:24 XK:20
        """
        )
    )
}


# A BIC's country: an IBAN country or one of the other usual ones.
_COUNTRIES = frozenset(_IBAN_LENGTHS) | _words(
    """
    US CA MX AR CL CO PE UY VE EC BO PY BR AU NZ JP CN HK SG IN ZA MA KR TW
    """
)
# A one-token line that is a file, not a handle ("informe.pdf", "config.yml").
_FILE_TYPES = _words(
    """
    pdf jpg jpeg png gif heic doc docx xls xlsx csv txt zip rar log json xml yml yaml py
    js ts html htm php sql md ini conf cfg exe apk msi dmg mp3 mp4 mov wav odt ods ppt pptx
    """
)


def _iban_ok(value: str) -> bool:
    """An IBAN of a country's own length ("ES" and 22 more), whatever its check digits
    say: a user who mistypes one (or a made-up one in a test) still gave it, and the bot
    must keep it as said. A code of another length passes only the ISO 13616 mod-97
    check."""
    code = value.replace(" ", "")
    if not 15 <= len(code) <= 34:
        return False
    if _IBAN_LENGTHS.get(code[:2]) == len(code):
        return True
    moved = code[4:] + code[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1
