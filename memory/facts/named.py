"""A name a text gives a place, a company, a product or a person, without a word for it.

- ``named``: two or more capitalised words in a row, with the links names have ("de",
  "del", "of", "&") and model codes among them: "Brightside Cleaning", "Notaría de
  Villalba Ortiz", "Glenarra House", "Studio 4.2 Gable", "Priya Raman". A support agent
  notes these down; users who type in lower case capitalise little else. Not a
  sentence's opening word when it is a common one ("Thanks Priya Raman" gives "Priya
  Raman"), not a weekday or a month ("Saturday 19 September" is a date). Inside a
  sentence, a name's number goes with it ("el router Livebox 6", "on Windows 11",
  "Ribera del Sena 14"), and one capitalised word after a word in lower case is a name
  too ("stuck in Mississauga", "the quote from Mark", "una carta de Hacienda"); a
  sentence's first word alone never is ("Madrid, el martes").

The weakest kind: where another rule reads a fact on any of its characters, the name
yields (`memory.facts.extract.YIELDING_KINDS`): "Pedido PED-4471" stays an order
number, "Bosch PUE611BB5E" a model's code.
"""

from __future__ import annotations

import re

from memory.facts.rules import _Rule, _rule

_UPPER = "A-ZÁÉÍÓÚÑÜ"
_LOWER = "a-záéíóúñüàèïç"
# A capitalised word of two letters or more ("Gable", "Ortiz", "O'Brien", "Saint-Denis"):
# its capital, then the rest.
_REST = rf"(?:[{_LOWER}]|['’][{_UPPER}])[{_LOWER}]*(?:-[{_UPPER}][{_LOWER}]+)?"
_WORD = rf"[{_UPPER}]{_REST}"
# A model's code or number among the words: capitals and digits, or a dotted number
# ("PUE611BB5E", "S23", "4.2"); never a plain number, which another kind reads.
_CODE = r"(?:\d{1,3}\.\d{1,3}|(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,12})"
_LINK = r"de|del|de la|de las|de los|of|of the|&"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CALENDAR = _words(
    "Monday Mon Tuesday Tues Tue Wednesday Wed Thursday Thurs Thu Friday Fri Saturday Sat"
    " Sunday Sun January February March April May June July August September October"
    " November December Lunes Martes Miércoles Miercoles Jueves Viernes Sábado Sabado"
    " Domingo Enero Febrero Marzo Abril Mayo Junio Julio Agosto Septiembre Setiembre"
    " Octubre Noviembre Diciembre"
)
# Words that open a sentence or greet, capitalised by position, not names.
_COMMON = _words(
    """
    Hola Hi Hello Hey Dear Estimado Estimada Buenos Buenas Días Dias Tardes Noches Good
    Morning Afternoon Evening
    Thanks Thank Gracias Cheers Ok Okay Vale Yes Yeah Yep No Nope Sí Si Please Porfa
    Sorry Perdona Perdón Perdon Disculpa Disculpe The El La Los Las Lo Un Una Unos Unas My
    Mi Mis Our Your Su Sus Tu Tus Nuestro Nuestra It Its This That These Those Este Esta
    Estos Estas Ese Esa Eso Esto Aquel He She We They You Yo Él Ella Nosotros Ellos Usted
    And But Or So Then Also Just Still Now Today Tomorrow Yesterday Here There Y Pero
    Entonces También Tambien Ya Aún Aun Todavía Todavia Ahora Hoy Mañana Manana Ayer Aquí
    Aqui Allí Alli Is Are Was Were Be Do Does Did Can Could Would Will Should Have Has Had
    Es Son Era Fue Está Esta Estoy Hay Tengo Tiene Puedo Puede Podéis Podeis What When
    Where Why How Which Who Qué Que Cuándo Cuando Dónde Donde Por Para Con Sin En De Del
    Al A An In On At For From With Without To Of As If Si Nada Nothing Everything Todo
    """
)


def _not_starting(excluded: frozenset[str]) -> str:
    """Right after a capital: the word it opens is none of `excluded` (each looked up by
    its first letter, so only the capital's own words are tried)."""
    rest: dict[str, list[str]] = {}
    for word in sorted(excluded, key=lambda w: (-len(w), w)):
        rest.setdefault(word[0], []).append(re.escape(word[1:]))
    tails = "|".join(rf"(?<={c})(?:{'|'.join(v)})" for c, v in sorted(rest.items()))
    return rf"(?!(?:{tails})\b)"


# A capital with nothing of a word, an address or a code just before it (the pattern
# opens with the capital, so the scan skips to capitals fast), then the word goes on.
_NAMED = (
    rf"[{_UPPER}](?<![\w@.'’/-][{_UPPER}]){_not_starting(_COMMON | _CALENDAR)}"
    rf"{_REST}(?:(?:\s(?:{_LINK})\s|\s)(?!(?:{'|'.join(sorted(_CALENDAR))})\b)(?:{_WORD}|{_CODE})"
    rf"(?![\w@'’/-]|\.\w))+"
)

# A name with its number, inside a sentence ("el router Livebox 6", "on Windows 11",
# "comunidad de Ribera del Sena 14", "the Pixel 8 Pro"): after a word in lower case, so
# that a sentence's first word ("Esperé 20 minutos") is not taken for one; the number is
# short and no year, nor the start of a longer one ("Juan 600 123 456" is a phone).
_NUMBERED = (
    rf"[{_UPPER}](?<=[{_LOWER},] [{_UPPER}]){_REST}(?:(?:\s(?:{_LINK})\s|\s)(?:{_WORD}|{_CODE}))*"
    rf"\s(?!(?:19|20)\d\d(?!\d))\d{{1,4}}(?![\w:/'’-]|[.,]\d|\s\d)(?:\s{_WORD}(?![\w@'’/-]))?"
)

# One capitalised word inside a sentence ("stuck in Mississauga", "the quote from Mark",
# "dispatched via Evri"): after a word in lower case, so that a sentence's first word is
# not taken for one; no hyphen ("Wi-Fi"). And the key-fact line it renders as ("- Evri",
# the word alone on its line), so that the next fold requires it again.
_ONE = rf"{_not_starting(_COMMON | _CALENDAR)}(?:[{_LOWER}]|['’][{_UPPER}])[{_LOWER}]*"
_SINGLE = rf"[{_UPPER}](?<=[{_LOWER}] [{_UPPER}]){_ONE}(?![\w@'’/-]|\.\w)"
_SINGLE_LINE = rf"(?m)^- ([{_UPPER}]{_ONE})[ \t]*$"

NAMED_RULES: list[_Rule] = [
    _rule("named", _NAMED, rf"[{_LOWER}]\s(?:(?:{_LINK})\s)?[{_UPPER}0-9]"),
    _rule("named", _NUMBERED, r"\w\s\d"),
    _rule("named", _SINGLE, rf"[{_LOWER}] [{_UPPER}]"),
    _rule("named", _SINGLE_LINE, rf"(?m)^- [{_UPPER}]", group=1),
]


def named_ok(value: str) -> bool:
    """A name not opening with a sentence's common first word, nor a weekday or a month
    (a single word is one only inside a sentence, which the patterns see to)."""
    words = value.split()
    return words[0] not in _COMMON and words[0] not in _CALENDAR
