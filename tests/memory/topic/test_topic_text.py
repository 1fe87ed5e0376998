"""Topic text helpers: folding, words, phrase and intent-family readings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

# The per-text caches must give exactly what reading the joined text gave: the references
# below are the original, uncached definitions.
_EPISODE_WORDS = (
    "base de datos se cae cuelga no llego mal estado servicio error code bank account "
    "double charge pago pagos logs log https http reclamo queja factura compra precio "
    "ya funciona works now thats all but pero gracias por todo bye otra cosa by the way "
    "İnvoice Cañón l'app it’s order-731. #4821 a.b _x_ café ¿ - /"
)


_EPISODE_PIECES = [*_EPISODE_WORDS.split(), " ", "  ", ", ", ". ", "? ", "\n"]


_texts = st.lists(
    st.lists(st.sampled_from(_EPISODE_PIECES), max_size=12).map(" ".join), max_size=6
)


def _reference_fold(text: str) -> str:
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return plain.replace("'", "").replace("’", "")


def _reference_family_hits(text: str, families: dict[str, tuple[str, ...]]) -> dict[str, int]:
    from memory.topic.text import words

    def single(entry: str, token: str) -> bool:
        if entry.endswith("*"):
            return token.startswith(entry[:-1])
        return token in (entry, entry + "s", entry + "es")

    tokens = words(text)
    counts: dict[str, int] = {}
    for token in tokens:
        for family, entries in families.items():
            hits = sum(single(e, token) for e in entries if " " not in e)
            if hits:
                counts[family] = counts.get(family, 0) + hits
    joined = " " + " ".join(tokens) + " "
    for family, entries in families.items():
        hits = sum(joined.count(" " + e + " ") for e in entries if " " in e)
        if hits:
            counts[family] = counts.get(family, 0) + hits
    return counts


@given(st.text(alphabet="aAeÉñÑ'’İıẞ\u0301 .,¿?-#€$@_/1" + "\u034f\u20d7", max_size=40))
def test_fold_equals_the_per_character_definition(text: str) -> None:
    from memory.topic.text import fold

    assert fold.__wrapped__(text) == _reference_fold(text)


@given(st.text(alphabet="ab1#$€_-./@ ,x\n", max_size=40))
def test_words_end_on_a_letter_digit_or_symbol(text: str) -> None:
    """The possessive token regex equals the original: longest run, then `.-/_` stripped."""
    import re

    from memory.topic.text import words

    old = re.compile(r"[a-z0-9#$€][a-z0-9#_\-./@€$]*")
    expected = tuple(w.strip(".-/_") for w in old.findall(text) if w.strip(".-/_"))
    assert words.__wrapped__(text) == expected


@given(_texts)
def test_episode_readings_equal_reading_the_joined_text(texts: list[str]) -> None:
    """Family hits, cue phrases and terms from per-text caches equal those of the texts
    joined by newlines, phrases spanning two texts ("base" | "de datos") included."""
    from memory.topic.cues import CLOSURE, INTENT_FAMILIES, NEW_REQUEST
    from memory.topic.families import family_hits_in
    from memory.topic.text import (
        phrase_hits,
        phrase_hits_in,
        term_set,
        terms,
    )

    joined = "\n".join(texts)
    expected = _reference_family_hits(joined, dict(INTENT_FAMILIES))
    got = family_hits_in(texts, INTENT_FAMILIES)
    assert list(got.items()) == list(expected.items())  # same counts, same order
    for cues in (CLOSURE, NEW_REQUEST):
        assert phrase_hits_in(texts, cues) == phrase_hits(joined, cues)
    assert frozenset().union(*map(term_set, texts)) == frozenset(terms(joined))


def test_a_phrase_across_two_texts_counts_once_joined() -> None:
    """A summary ending in "base" and a message opening with "de datos" still make the
    phrase "base de datos", as they did when the episode was one joined text."""
    from memory.topic.cues import INTENT_FAMILIES
    from memory.topic.families import family_hits, family_hits_in

    texts = ["revisamos la base", "de datos y el servidor"]
    apart = [family_hits(text, INTENT_FAMILIES).get("technical", 0) for text in texts]
    assert apart == [0, 1]  # only "servidor"
    assert family_hits_in(texts, INTENT_FAMILIES) == {"technical": 2}  # and the phrase
