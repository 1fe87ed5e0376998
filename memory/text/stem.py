"""A light Spanish/English suffix stemmer, with a configuration per use.

Recall and the topic heuristic stem differently, and each must keep stemming as it
always has (the recall index stores its terms; the topic profile was tuned on its own),
so each names its `Stemmer`: `RECALL_STEMMER` (longest suffix first, cap 7) and
`TOPIC_STEMMER` (its own suffixes, codes whole, a final vowel off, cap 6).
"""

from __future__ import annotations

from dataclasses import dataclass

_RECALL_SUFFIXES = """
aciones acion iciones icion amientos amiento imientos imiento mente ables able ibles
ible istas ista ando iendo aron ieron aban abas aba iamos ian ias ia ados adas ado ada
idos idas ido ida emos amos imos ais eis aste iste ara era ira ar er ir es as os ed ing
ings ions ion ers er ies ly s a e o i
"""
_TOPIC_SUFFIXES = (
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


@dataclass(frozen=True, slots=True)
class Stemmer:
    """One suffix off (the first of `suffixes` that leaves `min_stem` letters), then, of a
    word of four letters or more, one of `final_vowels`; at most `cap` letters stay. With
    `codes_whole`, a word with a digit (`4821`, `order-731`) is kept as it is."""

    suffixes: tuple[str, ...]
    cap: int
    min_stem: int = 3
    codes_whole: bool = False
    final_vowels: str = ""

    def __call__(self, word: str) -> str:
        if self.codes_whole and any(ch.isdigit() for ch in word):
            return word
        for suffix in self.suffixes:
            if word.endswith(suffix) and len(word) - len(suffix) >= self.min_stem:
                word = word[: -len(suffix)]
                break
        if self.final_vowels and len(word) >= 4 and word[-1] in self.final_vowels:
            word = word[:-1]
        return word[: self.cap]


RECALL_STEMMER = Stemmer(tuple(sorted(_RECALL_SUFFIXES.split(), key=len, reverse=True)), cap=7)
TOPIC_STEMMER = Stemmer(_TOPIC_SUFFIXES, cap=6, codes_whole=True, final_vowels="aeo")
