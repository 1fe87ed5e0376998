"""Intent-family readings of texts: how many words of each family (technical, billing,
purchase, complaint) a text or an episode holds. Pure, cached per text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory.caches import WINDOW_TEXTS
from memory.topic.text import _TEXT_CACHE, words


def family_hits(text: str, families: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """How many words or phrases of each intent family `text` contains (zeros left out)."""
    return family_hits_in((text,), families)


def family_hits_in(
    texts: Sequence[str], families: Mapping[str, tuple[str, ...]]
) -> dict[str, int]:
    """`family_hits` of the texts joined by newlines, from what is remembered of each text.

    The episode (summary and window) is mostly the same texts turn after turn, and joining
    and re-reading its ~1,000 words every turn was most of the topic check. Words never
    span texts, so single-word hits add up text by text. A phrase may span two texts, so
    phrases are counted on the joined words, but only those whose words all occur."""
    index = _index(families)
    if len(texts) == 1:  # a message: cached whole (the same text may come again)
        return dict(_cached_family_hits(index, texts[0]))
    # An episode: a new combination every turn (its window moves), so not cached as a
    # whole; its texts' readings are.
    return dict(_family_hits(index, texts))


@lru_cache(maxsize=_TEXT_CACHE)
def _cached_family_hits(index: _Families, text: str) -> tuple[tuple[str, int], ...]:
    return _family_hits(index, (text,))


def _family_hits(index: _Families, texts: Sequence[str]) -> tuple[tuple[str, int], ...]:
    readings = [_read_families(index, text) for text in texts]
    counts: dict[str, int] = {}
    for reading in readings:
        for family, hits in reading.single_hits:
            counts[family] = counts.get(family, 0) + hits
    present = frozenset().union(*(r.phrase_words for r in readings))
    joined = ""
    for family, phrases in index.phrases:
        candidates = [phrase for phrase, needed in phrases if needed <= present]
        if not candidates:
            continue
        joined = joined or " " + " ".join(r.spaced for r in readings if r.spaced) + " "
        hits = sum(joined.count(" " + phrase + " ") for phrase in candidates)
        if hits:
            counts[family] = counts.get(family, 0) + hits
    return tuple(counts.items())


@dataclass(frozen=True, eq=False, slots=True)
class _Families:
    """Intent families indexed for matching. Single-word entries by the tokens they match:
    a word (with its plural in -s or -es) by exact lookup, a `prefix*` by looking up the
    token's own prefixes; phrases by the words they need. Hashed by identity, so it is a
    cheap cache key."""

    names: tuple[str, ...]
    whole: dict[str, tuple[str, ...]]  # token -> the family of each entry it matches
    prefixes: dict[str, tuple[str, ...]]  # prefix -> the family of each entry with it
    longest_prefix: int
    phrases: tuple[tuple[str, tuple[tuple[str, frozenset[str]], ...]], ...]
    phrase_words: frozenset[str]


@dataclass(frozen=True, slots=True)
class _TextFamilies:
    """What one text contributes: single-word hits in order of first hit, the words it has
    that some phrase needs, and its tokens joined by spaces."""

    single_hits: tuple[tuple[str, int], ...]
    phrase_words: frozenset[str]
    spaced: str


_INDEXES: dict[int, tuple[Mapping[str, tuple[str, ...]], _Families]] = {}


def _index(families: Mapping[str, tuple[str, ...]]) -> _Families:
    """The families indexed for matching, built once per mapping."""
    known = _INDEXES.get(id(families))
    if known is None or known[0] is not families:
        known = (families, _build_index(families))
        _INDEXES[id(families)] = known
    return known[1]


def _build_index(families: Mapping[str, tuple[str, ...]]) -> _Families:
    whole: dict[str, list[str]] = {}
    prefixes: dict[str, list[str]] = {}
    for name, entries in families.items():
        for entry in entries:
            if " " in entry:
                continue
            if entry.endswith("*"):
                prefixes.setdefault(entry[:-1], []).append(name)
                continue
            for form in (entry, entry + "s", entry + "es"):
                whole.setdefault(form, []).append(name)
    phrases = tuple(
        (name, tuple((e, frozenset(e.split())) for e in entries if " " in e))
        for name, entries in families.items()
    )
    return _Families(
        names=tuple(families),
        whole={form: tuple(names) for form, names in whole.items()},
        prefixes={prefix: tuple(names) for prefix, names in prefixes.items()},
        longest_prefix=max(map(len, prefixes), default=0),
        phrases=phrases,
        phrase_words=frozenset(w for _, group in phrases for _, needed in group for w in needed),
    )


@lru_cache(maxsize=WINDOW_TEXTS)
def _read_families(index: _Families, text: str) -> _TextFamilies:
    """Cached per text: the summary and the window's user texts come back every turn."""
    tokens = words(text)
    distinct = Counter(tokens)  # in first-seen order, so families keep their order of hits
    counts: dict[str, int] = {}
    for token, repeats in distinct.items():
        for family, hits in _token_hits(index, token):
            counts[family] = counts.get(family, 0) + hits * repeats
    return _TextFamilies(
        tuple(counts.items()), index.phrase_words.intersection(distinct), " ".join(tokens)
    )


@lru_cache(maxsize=65_536)
def _token_hits(index: _Families, token: str) -> tuple[tuple[str, int], ...]:
    """Per family, how many of its single-word entries `token` matches (each one counts:
    `pagos` is both `pago` and `pagos`). A dozen lookups rather than a test of every
    entry: new tokens (numbers, names, typos) come every turn."""
    found = list(index.whole.get(token, ()))
    for end in range(min(len(token), index.longest_prefix) + 1):
        found.extend(index.prefixes.get(token[:end], ()))
    counts = Counter(found)
    return tuple((name, counts[name]) for name in index.names if name in counts)
