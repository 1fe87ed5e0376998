"""Text helpers for topic detection, Spanish and English: terms, light stems, cue phrases.

Pure functions over strings. Everything is compared accent-free and lower-case, so the
word lists below are written that way too. Folding, the stemmer and the stop words are
`memory.text`'s, with the topic's configuration (`TOPIC_STEMMER`, `TOPIC_STOP_WORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory.caches import WINDOW_TEXTS
from memory.text.fold import fold as fold_text
from memory.text.stem import TOPIC_STEMMER
from memory.text.stopwords import TOPIC_STOP_WORDS

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


@lru_cache(maxsize=_TEXT_CACHE)
def fold(text: str) -> str:
    """Lower-case, accent-free, apostrophes removed; punctuation kept."""
    return fold_text(text, apostrophes=False)


@lru_cache(maxsize=_TEXT_CACHE)
def words(text: str) -> tuple[str, ...]:
    """Folded word tokens (codes such as `#4821` or `order-731` stay whole). Cached: the
    window's texts come back turn after turn."""
    return tuple(_WORD.findall(fold(text)))


@lru_cache(maxsize=WINDOW_TEXTS)
def term_set(text: str) -> frozenset[str]:
    """The distinct `terms` of `text`. Cached: the summary and the window's texts are
    compared against every new message, so their sets are built once, not every turn."""
    return frozenset(terms(text))


@lru_cache(maxsize=_TEXT_CACHE)
def terms(text: str) -> tuple[str, ...]:
    """Stemmed content words of `text`, in order, repeats kept."""
    return tuple(filter(None, map(_term, words(text))))  # a stem is never empty


@lru_cache(maxsize=65_536)
def _term(word: str) -> str | None:
    """The stem of a content word, None for a stopword. Cached per word: a new text is
    mostly words seen before, and stemming each again was most of `terms`."""
    return None if _is_stopword(word) else TOPIC_STEMMER(word)


def _is_stopword(word: str) -> bool:
    if len(word) < 3 and not any(c.isdigit() for c in word):
        return True
    return word in TOPIC_STOP_WORDS or (word.endswith("s") and word[:-1] in TOPIC_STOP_WORDS)


def sentences(text: str) -> list[str]:
    """Rough sentence split on end punctuation and opening ¿ ¡ (a fresh list)."""
    return list(_sentences(text))


@lru_cache(maxsize=_TEXT_CACHE)
def _sentences(text: str) -> tuple[str, ...]:
    """Cached: a message's sentences are read by the size features, its questions and the
    closing check, and again the next turn when it is the last exchange's user text."""
    return tuple(part for part in _SENTENCE.split(text) if part and part.strip())


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


def phrase_candidates(text: str, phrases: tuple[str, ...]) -> list[str]:
    """The phrases of the list whose words all occur in `text` (plain words; a phrase with
    another word is always one): a superset of its hits, and of the hits of any part of
    `text` cut at spaces or at opening ¿ ¡ (`sentences`), whose words are `text`'s."""
    return _candidates((text,), phrases)


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
    cues = _cue_index(_as_tuple(phrases))
    found = list(cues.always)
    for word in cues.keys.intersection(present):  # the few cue words the text has
        found += [n for n, needed in cues.by_word[word] if needed <= present]
    found.sort()  # the list's order, as a walk of the whole list gives
    return [cues.phrases[n] for n in found]


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


@dataclass(frozen=True, slots=True)
class _CueIndex:
    """A cue list indexed by one word of each phrase, so finding the candidates of a text
    looks up the text's few cue words instead of testing every phrase of the list."""

    phrases: tuple[str, ...]
    always: tuple[int, ...]  # positions of the phrases that need no word (always tried)
    by_word: dict[str, tuple[tuple[int, frozenset[str]], ...]]  # word: (position, needed)
    keys: frozenset[str]


@lru_cache(maxsize=64)
def _cue_index(phrases: tuple[str, ...]) -> _CueIndex:
    always: list[int] = []
    by_word: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for n, (_, needed) in enumerate(_cues(phrases)):
        if not needed:
            always.append(n)
        else:
            by_word.setdefault(min(needed), []).append((n, needed))
    grouped = {word: tuple(entries) for word, entries in by_word.items()}
    return _CueIndex(phrases, tuple(always), grouped, frozenset(grouped))


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
