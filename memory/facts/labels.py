"""What a fact's value is, read from the words right before it ("la IP del servidor es
185.42.17.9" → "IP del servidor"), so a key-facts line says more than a bare value.

A label is only given when those words name something a user would look the value up by
(a server, an account, a phone...): "lo probé a las 14:30" gives no label.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from memory.caches import FOLD_TEXTS
from memory.text.accents import strip_marks


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_WORDS = 5
MAX_CHARS = 40
# Where the words that describe a value start: the clause around it.
_CLAUSE = re.compile(r"[.;!?¿¡\n()\[\]{}\"«»“”]|,\s|\s-\s|\b(?:y|and|pero|but|o|or)\s", re.I)
# A verb between the noun and the value: the noun is what follows it ("el servidor tiene
# la IP 1.2.3.4" → "IP").
_VERB = re.compile(
    r"\b(?:tiene|tengo|tenemos|has|have|usa|uso|usamos|uses|use|apunta a|points to"
    r"|est[aá]|is|are|es|son|era|fue|fueron|was|were|ser[aá]|queda|sale|aparece|shows|pone|says"
    r"|dice)\b",
    re.I,
)
_LEADING = _words(
    """
    - * • a al an the my our your his her their mi mis su sus tu tus nuestro nuestra
    nuestros vuestro el la los las lo un una unos unas de del that que es is as como con
    with en in on para for y and hola hi hello also tambien también ah pues bueno vale
    ok
    """
)
_TRAILING = _words(
    """
    es is son are era was sera será seria sería : = el la the de del a al to en in at on
    now ahora actual current nuevo nueva new numero número number no n nº n.º num
    """
)
_OF = frozenset({"de", "del", "of", "for", "para"})
# Words that make a label worth printing: what a value is looked up by. Folded.
_NOUNS = _words(
    """
    numero number ip ips servidor servidores server servers dns host hostname
    dominio domain domains
    web tienda shop nameserver ns mx vpn router gateway enlace proxy maquina machine
    equipo cuenta account cliente customer client socio member poliza policy contrato
    contract iban banco bank pedido order factura invoice ticket incidencia caso case
    referencia reference ref telefono phone movil mobile fijo whatsapp correo email mail
    direccion address domicilio entrega delivery envio shipment paquete parcel
    seguimiento tracking matricula plate coche car vehiculo vehicle importe total precio
    tarjeta card
    price cargo charge reembolso refund pago payment cuota fee abono deposito deposit
    cita appointment visita visit fecha date plazo deadline codigo code clave pin
    usuario user empresa company nif cif dni vat tarifa plan suministro cups contador
    meter serie serial licencia license
    """
)


def label_before(text: str, start: int) -> str:
    """The label of the value starting at `text[start]`, or "" when the text gives none."""
    window = text[max(0, start - 80) : start]
    cuts = list(_CLAUSE.finditer(window))
    return _label(window[cuts[-1].end() :] if cuts else window)


@lru_cache(maxsize=FOLD_TEXTS)
def _label(words: str) -> str:
    """The label the words of a value's clause give. Cached: the same few words come
    before the values of many messages ("pedido ", "número de cliente ")."""
    verbs = list(_VERB.finditer(words))
    if verbs:
        after = words[verbs[-1].end() :]
        words = after if _meaningful(after) else words[: verbs[-1].start()]
    return _tidy(words)


def _tidy(words: str) -> str:
    parts = words.replace(":", " : ").split()
    while parts and (_fold(parts[0]) in _LEADING or not _fold(parts[0])):
        parts.pop(0)
    while parts and (_fold(parts[-1]) in _TRAILING or not _fold(parts[-1])):
        parts.pop()
    parts = parts[_head(parts) :] if parts else parts
    label = " ".join(parts)
    if not parts or len(parts) > MAX_WORDS or len(label) > MAX_CHARS:
        return ""
    if any(c.isdigit() for c in label):
        return ""
    return label


def _head(parts: list[str]) -> int:
    """Where the label starts: at the last noun, taken back over "X de Y" ("número de
    cliente", "IP del servidor"); "para el abono usad el IBAN" is an "IBAN"."""
    nouns = [i for i, p in enumerate(parts) if _fold(p) in _NOUNS]
    if not nouns:
        return len(parts)
    start = nouns[-1]
    while start >= 2 and _fold(parts[start - 1]) in _OF and _fold(parts[start - 2]) in _NOUNS:
        start -= 2
    return start


def _meaningful(words: str) -> bool:
    return any(_fold(p) in _NOUNS for p in words.split())


@lru_cache(maxsize=FOLD_TEXTS)
def _fold(word: str) -> str:
    if not word.isascii():
        word = unicodedata.normalize("NFKD", word)
    return strip_marks(word.lower()).strip(".,:;-*•=#")
