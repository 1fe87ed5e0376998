"""Text helpers for topic detection, Spanish and English: terms, light stems, cue phrases.

Pure functions over strings. Everything is compared accent-free and lower-case, so the
word lists below are written that way too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from memory.text.accents import strip_marks

# A token starts with a letter, digit, `#`, `$` or `€`, may hold `_ - . / @` inside and ends
# on anything but `_ - . /` (`order-731.` is `order-731`). Possessive, since the classes do
# not overlap: one regex pass, no per-token strip.
_WORD = re.compile(r"[a-z0-9#$€][a-z0-9#$€@]*+(?:[_\-./]++[a-z0-9#$€@]++)*+")
_TEXT_CACHE = 4096
_SENTENCE = re.compile(r"(?<=[.!?¿¡\n])\s+|\s*[¿¡]")
_PLAIN_WORD = re.compile(r"[a-z0-9]+")


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
    if text.isascii():  # nothing for NFKD to split, no marks, no typographic apostrophe
        return text.lower().replace("'", "")
    plain = strip_marks(unicodedata.normalize("NFKD", text.lower()))
    return plain.replace("'", "").replace("’", "")


@lru_cache(maxsize=_TEXT_CACHE)
def words(text: str) -> tuple[str, ...]:
    """Folded word tokens (codes such as `#4821` or `order-731` stay whole). Cached: the
    window's texts come back turn after turn."""
    return tuple(_WORD.findall(fold(text)))


@lru_cache(maxsize=_TEXT_CACHE)
def term_set(text: str) -> frozenset[str]:
    """The distinct `terms` of `text`. Cached: the summary and the window's texts are
    compared against every new message, so their sets are built once, not every turn."""
    return frozenset(terms(text))


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
    return tuple(filter(None, map(_term, words(text))))  # a stem is never empty


@lru_cache(maxsize=65_536)
def _term(word: str) -> str | None:
    """The stem of a content word, None for a stopword. Cached per word: a new text is
    mostly words seen before, and stemming each again was most of `terms`."""
    return None if _is_stopword(word) else stem(word)


def _is_stopword(word: str) -> bool:
    if len(word) < 3 and not any(c.isdigit() for c in word):
        return True
    return word in STOPWORDS or (word.endswith("s") and word[:-1] in STOPWORDS)


def sentences(text: str) -> list[str]:
    """Rough sentence split on end punctuation and opening ¿ ¡."""
    return [part for part in _SENTENCE.split(text) if part and part.strip()]


def phrase_hits(text: str, phrases: Iterable[str]) -> list[str]:
    """Cue phrases present in `text` as whole words, unless negated earlier in their clause."""
    return phrase_hits_in((text,), phrases)


def phrase_hits_in(texts: Sequence[str], phrases: Iterable[str]) -> list[str]:
    """`phrase_hits` of the texts joined by newlines, without folding the joined text in
    the usual case where no phrase has all its words in them (a phrase may span texts)."""
    if len(texts) == 1 and isinstance(phrases, tuple):  # a text and a cue list: cached
        return list(_cached_phrase_hits(texts[0], phrases))  # (a fresh list per call)
    return _phrase_hits(texts, phrases)  # texts together: a new combination every turn


@lru_cache(maxsize=_TEXT_CACHE)
def _cached_phrase_hits(text: str, phrases: tuple[str, ...]) -> tuple[str, ...]:
    """Pure in its arguments, so cached like the other per-text readings: a text comes
    back (a message sent again, the same text in several chats) and costs a lookup."""
    return tuple(_phrase_hits((text,), phrases))


def _phrase_hits(texts: Sequence[str], phrases: Iterable[str]) -> list[str]:
    candidates = _candidates(texts, phrases)
    if not candidates:
        return []
    folded = fold("\n".join(texts))
    return [p for p in candidates if _present(folded, p)]


def _candidates(texts: Sequence[str], phrases: Iterable[str]) -> list[str]:
    """The phrases whose words all occur in `texts`, in their order: the only ones that can
    match. Each phrase word matches a whole run of letters and digits, and a newline between
    texts splits runs, so the words of the joined text are those of its parts."""
    if len(texts) == 1:  # one text: its cached set as is, no copy
        present = _plain_words(texts[0])
    else:
        present = frozenset().union(*map(_plain_words, texts))
    return [phrase for phrase, needed in _cues(_as_tuple(phrases)) if needed <= present]


def _as_tuple(phrases: Iterable[str]) -> tuple[str, ...]:
    return phrases if isinstance(phrases, tuple) else tuple(phrases)


@lru_cache(maxsize=_TEXT_CACHE)
def _plain_words(text: str) -> frozenset[str]:
    """The runs of letters and digits of folded `text`. Cached: the window's texts come back."""
    return frozenset(_PLAIN_WORD.findall(fold(text)))


@lru_cache(maxsize=64)
def _cues(phrases: tuple[str, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each phrase with the plain words a text needs for it to match (none required when
    a word has other characters: such a phrase is always tried)."""
    out = []
    for phrase in phrases:
        needed = phrase.split()
        plain = all(_PLAIN_WORD.fullmatch(word) for word in needed)
        out.append((phrase, frozenset(needed) if plain else frozenset()))
    return tuple(out)


@lru_cache(maxsize=2048)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A cue phrase as whole words, any punctuation or spaces between its words."""
    pattern = r"[\s,;:.!?¡¿]+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])")


def _matches(folded: str, phrase: str) -> Iterator[re.Match[str]]:
    return _phrase_pattern(phrase).finditer(folded)


def _present(folded: str, phrase: str) -> bool:
    for match in _matches(folded, phrase):
        clause = _CLAUSE_END.split(folded[: match.start()])[-1]
        if not _NEGATORS.intersection(clause.split()[-3:]):
            return True
    return False


# "¿qué otra cosa puedo probar?", "anything else I can try": asking for alternatives within
# the case, not announcing a new subject.
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
    if isinstance(phrases, tuple):  # the cue list: cached (a fresh list per call)
        return list(_cached_new_request_hits(text, phrases))
    return _new_request_hits(text, phrases)


@lru_cache(maxsize=_TEXT_CACHE)
def _cached_new_request_hits(text: str, phrases: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_new_request_hits(text, phrases))


def _new_request_hits(text: str, phrases: Iterable[str]) -> list[str]:
    folded = fold(text)
    hits = []
    for phrase in _candidates((text,), phrases):
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
