"""Details a support agent notes that the first rules had no shape for, Spanish and English.

Read from the fit half of a written set of support messages (`bench/data/facts_dev/`,
`python -m bench.facts --split fit --misses`), each kind a shape, not a list of values:

- ``person``: someone's name after the word that says who they are ("installer was
  called Gary", "titular Lucía Fernández Ortega", "my mum Margaret Hughes"), not the
  user's own (`name`, carried over as who the user is);
- ``slot``: a numbered place or size, said with the word that makes it one ("caja 34",
  "asiento 14C", "Desk 23", "size 10", "talla 42", "habitación 212", "gate 14", "4th
  floor", "piso 5ºC"): the value keeps the word, as "34" alone means nothing; a Spanish
  floor and door need none ("4º 2ª");
- ``measure``: a quantity in a unit ("500 litres", "1TB", "2 x 500 g", "8ft", "50GB");
- ``count``: how many of a thing, the number and the noun it counts ("2 adults",
  "50 camisetas", "41,200 actuations", "2 packs de agua"); never a time, a frequency, an
  attempt or a number said as a guess ("40 minutes", "4 veces", "about 300 shots");
- ``amount``: a Spanish amount without its currency, two decimals after a comma ("3,49");
- ``id``: a hexadecimal error code ("0x80070005"), an error code after its label ("the
  error code is E24", "error 21"), a code of capitals and numbers split by slashes
  ("PC/88/41273"), groups of digits joined by dashes ("84-2917733"), a name joined by
  underscores with a digit in it (a Wi-Fi network, "Casa_Perez_5G");
- ``phone``: a Mexican number in its groups ("55 3421 8870");
- ``postcode``: a British or Canadian postcode without its label ("M14 5RT", "M5V 2T6");
- ``date``: a weekday and its day ("Tuesday 14th", "jueves 9", "Thu 20 Mar"), an ordinal
  day ("on the 28th"), a card's or document's expiry ("caduca 09/29", "expiry 11/2031");
- ``version``: three numbers split by dots ("3.12.0"), not thousands ("1.234.567").

Each runs only where its gates pass (a digit, a start word), like the first rules, and
after them: on the same span an earlier rule's reading wins.
"""

from __future__ import annotations

from memory.facts.kinds import _PERSON
from memory.facts.rules import _AMPM, _EN_MONTH, _ES_MONTH, _Rule, _rule

# Words that make the number after them a place, a seat or a size, lowered and grouped by
# their first letter (the scan tries one alternative a letter: `heads`).
_SLOT_HEADS = (
    r"c(?:aja|onsulta|ama|abin|oche|oach|arriage)|b(?:ox|ay|ed)|t(?:aquilla|alla|erminal)"
    r"|l(?:ocker|ote)|d(?:esk|ock)|m(?:esa|uelle)|p(?:uesto|la(?:za|tform|nta)|iso"
    r"|abell[oó]n)|hab|r(?:oom|ow)|gate|a(?:siento|nd[eé]n|p(?:to|art)|ula)"
    r"|s(?:eat|ize|tand|ala)|f(?:ila|lat|loor|all[oa])|error|vag[oó]n"
)
_SLOT_WORDS = (
    r"caja|cajas|box|taquilla|locker|desk|mesa|puesto|habitaci[oó]n|hab\.|room|gate"
    r"|asiento|seat|fila|row|and[eé]n|platform|plaza|bay|muelle|dock|apto\.?"
    r"|apartamento|apartment|flat|piso|planta|floor|talla|size|stand|pabell[oó]n"
    r"|terminal|lote|consulta|sala|aula|cama|bed|cabina|cabin|vag[oó]n|coche|carriage"
    r"|coach|error|fallo|falla"
)
# A short code: digits with a letter, a floor and its door ("5ºC", "4º 2ª"), a letter and
# digits ("E24"); not a year, not part of a longer number ("piso 612 345 678" is a phone)
# nor a time ("sala 10:30").
_SLOT_CODE = (
    r"(?!(?:19|20)\d\d(?!\d))"
    r"(?:\d{1,2}\s?[º°ª](?:\s?-?\s?(?:\d{1,2}\s?[º°ª]|[A-Za-z](?!\w)))?"
    r"|[A-Za-z]?\d{1,4}[A-Za-z]?)(?![\w/-]|:\d|[ .,]\d)"
)
_ES_WEEKDAY = r"(?i:lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo)"
# Whole names in any case; the short ones capitalised ("sat 20 minutes" is no date).
_EN_WEEKDAY = (
    r"(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|Mon|Tues|Tue|Wed"
    r"|Thurs|Thu|Fri|Sat|Sun)"
)
# What an ordinal after "the" counts when it is no day ("the 2nd time").
_NOT_A_DAY = (
    r"(?!\s+(?i:time|times|attempt|try|floor|one|order|item|line|page|step|option|call"
    r"|email|message|payment|charge|person|place|week|month|year)\b)"
)
_ORDINAL = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)"
# Words after which a capitalised name is someone's: who a thing is for or was done by,
# a relative, a title ("installer was called Gary", "titular Lucía Fernández Ortega",
# "mi suegro, Ramón Castillo Díaz", "Mrs. J. Whitfield"). The user's own name is the
# `name` kind (`memory.facts.kinds`, carried over as who the user is); these are not.
_PERSON_INTRO = (
    r"(?i:persona|person|called|named|name|account holder|holder|installer|engineer"
    r"|technician|driver|courier|agent|advis[oe]r|my (?:mum|mom|mother|dad|father|wife"
    r"|husband|son|daughter|brother|sister|partner|grandma|grandmother|grandpa"
    r"|grandfather|landlord|landlady)"
    r"|mrs|mr|ms|dr|llamad[oa]|titular|asegurad[oa](?: es)?|(?:primer |segundo )?apellido"
    r"(?: es)?|el t[eé]cnico|la t[eé]cnica|el repartidor|la repartidora|el instalador"
    r"|el agente|la agente|mi (?:madre|padre|mujer|marido|esposa|esposo|hijo|hija|hermano"
    r"|hermana|suegro|suegra|abuelo|abuela|pareja|casero|casera)|sra|sr)"
)
# The same words' first letters, grouped (the scan's `heads`): letters only. "persona:"
# is how a key-fact line labels one (`memory.fold.keyfacts`), read back the same.
_PERSON_HEADS = (
    r"c(?:alled|ourier)|n(?:amed|ame)|a(?:ccount|gent|dvis|segurad|pellido)|holder"
    r"|installer|e(?:ngineer|l)|technician|d(?:river|r)|m(?:y|rs|r|s|i)|l(?:lamad|a)"
    r"|titular|p(?:ersona|erson|rimer)|s(?:egundo|ra|r)"
)
# Words after which a quoted text is what a screen, an app or an e-mail said ("it says
# 'code expired'", "me sale literal: «Servicio no disponible»"), and their first letters
# grouped (`heads`). "mensaje:" is how a key-fact line labels one, read back the same.
_QUOTE_INTRO = (
    r"(?i:says|said|say|shows|showing|show|reads|stuck on|message|error|mensaje|dice|dec[ií]a"
    r"|pone|pon[ií]a|sale|sal[ií]a|muestra|aparece|literal|avisa)"
)
_QUOTE_HEADS = (
    r"s(?:a(?:ys|id|y|le|l)|how|tuck)|reads|m(?:essage|ensaje|uestra)|error|d(?:ice|ec)"
    r"|p(?:one|on)|aparece|literal|avisa"
)
# The quoted text: words, spaces and the punctuation of a message; never a quote or a
# line break (`memory.facts.extract`'s sealed lines rest on that).
_QUOTED = r"[\w][\w .,:;()/#&%+=!?¿¡-]{1,78}[\w.)!?]"
# Grouped by their first letter: one alternative tried a letter after each number.
_UNITS = (
    r"[TGMK]B|k(?:B|Wh|W|g|m|ilos)|m(?:Ah|g|l|m|2|²|etros|eters|etres)|g(?:ramos|rams)?"
    r"|l(?:itros?|itres?|iters?|bs?)|ft|cm|oz|pulgadas|inches"
)

# Words after a number that make it no count of things a case is about: time and
# frequency ("40 minutes", "4 veces"), tries and contacts ("3 calls"), money said in
# words (an amount's), vague things ("2 things", "dos cosas"), and words ending in "s"
# that are no plural noun.
_NOT_COUNTED = (
    r"(?:s(?:ec(?:ond)?s|egundos|emanas|teps|tars)|min(?:ute)?s|minutos|h(?:ours|rs"
    r"|oras)|d[ií]as|days|weeks|wks|months|mes(?:es)?|years|yrs|a[nñ]os|times"
    r"|veces|attempts|intentos|tries|calls|llamadas|e-?mails|correos"
    r"|messages|mensajes|texts|things|cosas|questions|preguntas|euros|pesos"
    r"|d[oó]lares|dollars|pounds|libras|cents|c[eé]ntimos|bucks|bars|rings"
    r"|digits|d[ií]gitos|letters|letras|characters|caracteres|points|puntos|ones"
    r"|as|has|this|its|is|was|plus|less|unless|pues|antes|despu[eé]s|tras|m[aá]s|menos"
    r"|us|yes|pm|am|kms|kgs|lbs|gbs|mbs|dos|tres|seis"
    r"|veinti(?:d[oó]s|tr[eé]s|s[eé]is)|diecis[eé]is)"
)
# The noun a count counts: lower case and plural ("2 adults", "4 personas"; "size 10
# but" is no count), or any noun after "more" ("1 more bottle"); not one of those. A
# capitalised word after a number is a model or a place ("2021 Tesla", "Route 9").
_COUNTED = (
    rf"(?:(?:more|extra|m[aá]s) (?!{_NOT_COUNTED}\b)[a-záéíóúñü][a-záéíóúñü'-]{{2,}}"
    rf"|(?!{_NOT_COUNTED}\b)[a-záéíóúñü][a-záéíóúñü'-]{{1,}}s|people|children|gente)"
)
# A guess, a comparison or a rate before the number: no count the case rests on.
_GUESSED = (
    r"(?<!about )(?<!around )(?<!roughly )(?<!like )(?<!over )(?<!unos )(?<!unas )"
    r"(?<!casi )(?<!almost )(?<!nearly )(?<!than )(?<!m[aá]s de )(?<!menos de )"
    r"(?<!\d in )(?<!\d of )(?<!\d de )"  # a rate: "1 in 5 shots"
)

DETAIL_RULES: list[_Rule] = [
    # Not the offline summary's own line ("- User said: “…”", `memory.fold.extractive`):
    # there every user message would be a quoted message, required of every fold.
    _rule(
        "quote",
        rf"\b(?<!User ){_QUOTE_INTRO}\b[ ,:]{{0,3}}(?:literal(?:mente)?[ ,:]{{0,3}})?"
        rf"[\"'“‘«]({_QUOTED})[\"'”’»]",
        r"[\"'“‘«]",
        group=1,
        starts=_QUOTE_HEADS,
        heads=_QUOTE_HEADS,
    ),
    # A title and the name it goes with, said together ("Mr Okonkwo", "Sra. Quintana").
    _rule(
        "person",
        rf"\b(?:Mr|Mrs|Ms|Miss|Dr|Sr|Sra|Srta|Dña|Doña)\.?\s+(?:[A-Z]\.\s?)?{_PERSON}",
        r"\b(?:M[rsi]|D[rñ]|Sr)",
    ),
    _rule(
        "person",
        rf"\b{_PERSON_INTRO}\.?\s*[,:]?\s+(?:was\s+|is\s+|es\s+)?((?:[A-Z]\.\s?)?{_PERSON})",
        r"[A-ZÁÉÍÓÚÑÜ][a-z]",
        group=1,
        starts=_PERSON_HEADS,
        heads=_PERSON_HEADS,
    ),
    _rule(
        "slot",
        rf"\b(?i:{_SLOT_WORDS})\s?(?:n[º°o]\.?\s?|#\s?)?{_SLOT_CODE}",
        r"\d",
        starts=_SLOT_HEADS,
        heads=_SLOT_HEADS,
    ),
    # A Spanish floor and its door without the word ("4º 2ª", "5ºC").
    _rule(
        "slot",
        r"(?<![\w.])\d{1,2}\s?[º°ª]\s?-?\s?(?:\d{1,2}\s?[º°ª]|[A-Za-z](?!\w))",
        r"[º°ª]",
        at_runs=True,
    ),
    # An ordinal floor ("4th floor", "2nd floor").
    _rule("slot", rf"\b{_ORDINAL}\s+[Ff]loor\b", "loor", at_runs=True),
    _rule(
        "measure",
        rf"(?<![\w.,])\d+(?:[.,]\d+)?(?:\s?x\s?\d+(?:[.,]\d+)?)?\s?(?:{_UNITS})(?![\w/])",
        r"\d",
        at_runs=True,
    ),
    # How many of a thing: a whole number, one more ("1 more bottle"), the noun, and what
    # it is of ("2 packs de agua", "3 bottles of Rioja" stops at the capital).
    _rule(
        "count",
        rf"{_GUESSED}(?<![\w.,:/#$€£¥+-])(?!(?:19|20)\d\d\b|0\d)(?:\d{{1,3}}(?:,\d{{3}})+"
        rf"|\d{{1,5}})(?![\w.,:/%-]|[.,:]\d)\s{_COUNTED}\b(?!')"
        r"(?:\s(?:de|of)\s(?!(?:la|el|los|las|the|an?|una?|mi|my|su|your|this|that|este"
        r"|esta|ese|esa|it|them)\b)[a-záéíóúñü]{3,}\b)?",
        r"\d\s[a-zA-Záéíóúñ]",
        at_runs=True,
    ),
    # A Spanish amount without its currency: two decimals after a comma ("3,49", "23,50").
    _rule(
        "amount",
        r"(?<![\w.,])\d{1,3}(?:\.\d{3})*,\d{2}(?![\d,]|\s?%|\s?(?i:por\s?ciento))",
        r",\d",
        at_runs=True,
    ),
    _rule("id", r"(?<!\w)0x[0-9A-Fa-f]{4,16}(?!\w)", r"0x"),
    # An error code after its label, within a few words ("the error code on the
    # dishwasher is E24", "código de error: F3").
    _rule(
        "id",
        r"(?i:\berror(?:\s+code)?|c[oó]digo(?:\s+de\s+error)?|code)\b[\w ,-]{0,30}?\s"
        r"([A-Z]{1,2}-?\d{1,4}[A-Z]?)(?![\w-])",
        r"[A-Z]-?\d",
        group=1,
        starts=r"error|c[oó]digo|c(?<=\bc)ode",
    ),
    _rule("id", r"\b[A-Z]{1,5}/\d+(?:/\d+)+\b", r"[A-Z]/\d"),
    # Groups of digits joined by dashes, seven digits or more ("84-2917733", "8812-554-01").
    _rule(
        "id",
        r"(?<![\w.,/-])(?=(?:\d-?){7})\d{2,6}(?:-\d{2,9}){1,3}(?![\w/-]|[.,]\d)",
        r"-(?<=\d-)\d",
        at_runs=True,
    ),
    _rule(
        "id",
        r"(?<![\w@.-])(?=[A-Za-z0-9_]*\d)[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w@.-])",
        r"_",
    ),
    # A Mexican number, its area code of two digits and two groups of four ("55 3421 8870").
    _rule(
        "phone",
        r"(?<![\d.,])\d{2}\s\d{4}\s\d{4}(?!\d|[.,]\d)",
        r"\d\s\d",
        at_runs=True,
    ),
    _rule(
        "postcode",
        r"\b(?:[A-Z]{1,2}\d[A-Z\d]?\s\d[ABD-HJLNP-UW-Z]{2}|[A-Z]\d[A-Z]\s\d[A-Z]\d)\b",
        r"\d[A-Z]",
    ),
    _rule(
        "date",
        rf"\b{_EN_WEEKDAY}\.?,?\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b"
        rf"(?:\s+(?:of\s+)?{_EN_MONTH}\b\.?)?(?!\s?(?:[:.]\d|{_AMPM}))",
        r"\d",
        starts=r"mon|tue|wed|thu|fri|sat|sun",
    ),
    _rule(
        "date",
        rf"\b{_ES_WEEKDAY},?\s+(?:(?i:d[ií]a)\s+)?(?:[12]\d|3[01]|0?[1-9])\b"
        rf"(?:\s+de\s+{_ES_MONTH}\b)?(?![:.,]\d|\s?(?i:h\b|horas?|de la|{_AMPM}))",
        r"\d",
        starts=r"lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo",
    ),
    # An ordinal day after "the" ("change it to the 28th", "on the 2nd").
    _rule("date", rf"(?<=\b[Tt]he ){_ORDINAL}\b{_NOT_A_DAY}", r"\d", at_runs=True),
    _rule(
        "date",
        r"(?i:\b(?:caduca|caducidad|vence|vencimiento|expiry|expires?|exp\.?|valid until"
        r"|v[aá]lid[oa] hasta)\s*(?:date\s*)?:?\s*(?:el\s+|en\s+|on\s+)?)"
        r"((?:0[1-9]|1[0-2])/(?:\d{4}|\d{2}))(?![\d/])",
        r"\d/\d",
        group=1,
        starts=r"caduc|venc|exp|v[aá]lid",
    ),
    _rule(
        "version",
        r"(?<![\w.])(?!\d{1,3}\.\d{3}\.\d{3}(?!\d))\d{1,3}\.\d{1,3}\.\d{1,4}(?![\w]|\.\d)",
        r"\d\.\d",
        at_runs=True,
    ),
]
