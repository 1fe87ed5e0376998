"""Text helpers for topic detection, Spanish and English: terms, light stems, cue phrases.

Pure functions over strings. Everything is compared accent-free and lower-case, so the
word lists below are written that way too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9#$€][a-z0-9#_\-./@€$]*")
_TEXT_CACHE = 4096
_SENTENCE = re.compile(r"(?<=[.!?¿¡\n])\s+|\s*[¿¡]")


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CLAUSE_END = re.compile(r"[,;.!?\n]")
_NEGATORS = _split(
    "no not never nunca sin ni dont doesnt didnt isnt wasnt hasnt havent cant wont aun "
    "todavia still"
)

STOPWORDS = _split(
    """
    a about above after again all also am an and any anyone anything are aren as at be
    because been before being below between both but by can could did do does doing done
    don down during each else even ever every few for from further get gets getting got
    had has have having he her here hers him his how i if in into is it its itself just
    let like me more most much my myself no nor not now of off oh ok okay on once one only
    or other our ours out over own really same say said see she should so some something
    such than that thats the their theirs them then there these they thing things think
    this those though through to too under until up us very want was way we well were what
    when where which while who whom why will with would yeah yes yet you your yours
    yourself im ive id ill youre dont doesnt didnt isnt wasnt cant wont lol haha hi hello
    hey thanks thank please sure great good nice cool wow awesome fun love lot lots know
    go going make makes made try tried trying still going need new time today day right
    back sorry well also kind sounds sound fine bit pretty always never maybe much many
    s t m re ve ll d
    al algo algun alguna alguno algunos ante antes aqui asi aun aunque bien cada como con
    contra cual cuales cuando de del desde donde dos el ella ellas ellos en entre era eres
    es esa esas ese eso esos esta estaba estado estamos estan estar estas este esto estos
    estoy fue fueron ha habia han has hay hace hacer hasta he la las le les lo los mas me
    mi mis mucho muy nada ni no nos nosotros nuestra nuestro o otra otro para pero poco por
    porque pues que quien se sea ser si sido sin sobre solo son su sus tambien tan tanto te
    tener tengo ti tiene tienen todo todos tu tus un una uno unos usted ustedes ya yo
    hola gracias favor vale bueno buena claro dale ok listo perfecto entonces ahora hoy
    hate enjoy enjoys favorite favourite prefer glad understand appreciate interesting
    wonderful weird funny bad best better real ready use used usually whatever may ask
    asked told tell definitely certain super far long big little high kind true sure
    exactly totally probably actually already lately recently every someone somebody
    people person guess mean means feel feeling hear heard seems seem look looks fine
    amazing excellent perfect ok alright thing stuff lot bye
    genial excelente claro seguro creo parece siento entiendo igual mismo misma cosa
    cosas gente mejor peor grande poco mucha muchas muchos tal vez quizas verdad
    sigue sigo seguir todavia otra vez puedo puede pueden quiero quisiera queria necesito
    """
)

_SUFFIXES = (
    "aciones",
    "iciones",
    "amente",
    "imiento",
    "ation",
    "ciones",
    "mente",
    "ando",
    "iendo",
    "ings",
    "ing",
    "edly",
    "ness",
    "ed",
    "es",
    "os",
    "as",
    "ly",
    "s",
)
_STEM_CAP = 6


@lru_cache(maxsize=_TEXT_CACHE)
def fold(text: str) -> str:
    """Lower-case, accent-free, apostrophes removed; punctuation kept."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return plain.replace("'", "").replace("’", "")


@lru_cache(maxsize=_TEXT_CACHE)
def words(text: str) -> tuple[str, ...]:
    """Folded word tokens (codes such as `#4821` or `order-731` stay whole). Cached: the
    window's texts come back turn after turn."""
    return tuple(w.strip(".-/_") for w in _WORD.findall(fold(text)) if w.strip(".-/_"))


def stem(word: str) -> str:
    """A light stem: one common ES/EN suffix off, then a prefix cap; codes stay whole."""
    if any(ch.isdigit() for ch in word):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] in "aeo":
        word = word[:-1]
    return word[:_STEM_CAP]


@lru_cache(maxsize=_TEXT_CACHE)
def terms(text: str) -> tuple[str, ...]:
    """Stemmed content words of `text`, in order, repeats kept."""
    return tuple(stem(word) for word in words(text) if not _is_stopword(word))


def _is_stopword(word: str) -> bool:
    if len(word) < 3 and not any(c.isdigit() for c in word):
        return True
    return word in STOPWORDS or (word.endswith("s") and word[:-1] in STOPWORDS)


def sentences(text: str) -> list[str]:
    """Rough sentence split on end punctuation and opening ¿ ¡."""
    return [part for part in _SENTENCE.split(text) if part and part.strip()]


def phrase_hits(text: str, phrases: Iterable[str]) -> list[str]:
    """Cue phrases present in `text` as whole words, unless negated earlier in their clause."""
    folded = fold(text)
    return [p for p in phrases if _present(folded, p)]


@lru_cache(maxsize=2048)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A cue phrase as whole words, any punctuation or spaces between its words."""
    pattern = r"[\s,;:.!?¡¿]+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])")


def _matches(folded: str, phrase: str) -> Iterator[re.Match[str]]:
    if phrase.split(" ", 1)[0] not in folded:  # cheap test first: most cues are absent
        return iter(())
    return _phrase_pattern(phrase).finditer(folded)


def _present(folded: str, phrase: str) -> bool:
    for match in _matches(folded, phrase):
        clause = _CLAUSE_END.split(folded[: match.start()])[-1]
        if not _NEGATORS.intersection(clause.split()[-3:]):
            return True
    return False


# "¿qué otra cosa puedo probar?", "anything else I can try": asking for alternatives within
# the case, not announcing a new subject.
_PLAIN_WORD = re.compile(r"[a-z0-9]+")
_ALTERNATIVE_ASKERS = frozenset(
    [
        "que",
        "cual",
        "cuales",
        "alguna",
        "alguno",
        "algun",
        "ninguna",
        "ninguno",
        "probar",
        "intentar",
        "hacer",
        "what",
        "which",
        "any",
        "anything",
        "try",
        "do",
    ]
)


def new_request_hits(text: str, phrases: Iterable[str]) -> list[str]:
    """New-subject cue phrases, minus those that ask for an alternative in the same case."""
    folded = fold(text)
    hits = []
    for phrase in phrases:
        for match in _matches(folded, phrase):
            before = _PLAIN_WORD.findall(_CLAUSE_END.split(folded[: match.start()])[-1])[-2:]
            after = _PLAIN_WORD.findall(folded[match.end() :])[:2]
            if _NEGATORS.intersection(before) or _ALTERNATIVE_ASKERS.intersection(before):
                continue
            if {"to", "que", "para"}.intersection(after[:1]) and _ALTERNATIVE_ASKERS.intersection(
                after
            ):
                continue
            hits.append(phrase)
            break
    return hits


def family_hits(text: str, families: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """How many words or phrases of each intent family `text` contains (zeros left out).

    Each distinct token is matched against the families once and remembered: the same
    words come back every turn, and matching every entry against every token each time
    was most of a turn's CPU."""
    index = _index(families)
    tokens = words(text)
    counts: dict[str, int] = {}
    for token in tokens:
        for family, hits in _token_hits(index, token):
            counts[family] = counts.get(family, 0) + hits
    joined = " " + " ".join(tokens) + " "
    for family, entries in index:
        hits = sum(joined.count(" " + e + " ") for e in entries if " " in e)
        if hits:
            counts[family] = counts.get(family, 0) + hits
    return counts


_Index = tuple[tuple[str, tuple[str, ...]], ...]
_INDEXES: dict[int, tuple[Mapping[str, tuple[str, ...]], _Index]] = {}


def _index(families: Mapping[str, tuple[str, ...]]) -> _Index:
    """The families as a hashable value, built once per mapping."""
    known = _INDEXES.get(id(families))
    if known is None or known[0] is not families:
        known = (families, tuple((name, tuple(entries)) for name, entries in families.items()))
        _INDEXES[id(families)] = known
    return known[1]


@lru_cache(maxsize=65_536)
def _token_hits(index: _Index, token: str) -> tuple[tuple[str, int], ...]:
    """Per family, how many of its single-word entries `token` matches."""
    out = []
    for family, entries in index:
        hits = sum(_single_hit(entry, token) for entry in entries if " " not in entry)
        if hits:
            out.append((family, hits))
    return tuple(out)


def _single_hit(entry: str, token: str) -> bool:
    if entry.endswith("*"):
        return token.startswith(entry[:-1])
    return token in (entry, entry + "s", entry + "es")
