"""memory.text reads words as recall and topic each did before it was shared: the
references below are their former definitions, copied as they were."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from memory.text import RECALL_STEMMER, TOPIC_STEMMER, fold, strip_marks

_RECALL_SUFFIX_WORDS = """
aciones acion iciones icion amientos amiento imientos imiento mente ables able ibles
ible istas ista ando iendo aron ieron aban abas aba iamos ian ias ia ados adas ado ada
idos idas ido ida emos amos imos ais eis aste iste ara era ira ar er ir es as os ed ing
ings ions ion ers er ies ly s a e o i
"""
_RECALL_SUFFIXES = tuple(sorted(_RECALL_SUFFIX_WORDS.split(), key=len, reverse=True))
_TOPIC_SUFFIXES = (
    *("aciones", "iciones", "amente", "imiento", "ation", "ciones", "mente", "ando"),
    *("iendo", "ings", "ing", "edly", "ness", "ed", "es", "os", "as", "ly", "s"),
)
_TEXT = st.text(alphabet="aAeÉñÑoiIsSdgnrtcm'’İıẞ\u0301 .,¿?-#€$@_/14" + "\u034f\u20d7")
_WORDS = st.text(alphabet="abcdefgimnorstlyáé1", max_size=14)


def _recall_fold(text: str) -> str:
    return strip_marks(unicodedata.normalize("NFKD", text.lower()))


def _topic_fold(text: str) -> str:
    if text.isascii():
        return text.lower().replace("'", "")
    plain = strip_marks(unicodedata.normalize("NFKD", text.lower()))
    return plain.replace("'", "").replace("’", "")


def _recall_stem(word: str) -> str:
    for suffix in _RECALL_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:7]


def _topic_stem(word: str) -> str:
    if any(ch.isdigit() for ch in word):
        return word
    for suffix in _TOPIC_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] in "aeo":
        word = word[:-1]
    return word[:6]


@given(_TEXT)
def test_fold_is_what_recall_and_topic_folded(text: str) -> None:
    """With apostrophes, recall's folding; without, the topic's, ASCII or not."""
    assert fold(text) == _recall_fold(text)
    assert fold(text, apostrophes=False) == _topic_fold(text)


@given(_WORDS)
def test_each_stemmer_stems_as_its_reader_did(word: str) -> None:
    """RECALL_STEMMER (cap 7) and TOPIC_STEMMER (cap 6, codes whole) are the former stems."""
    assert RECALL_STEMMER(word) == _recall_stem(word)
    assert TOPIC_STEMMER(word) == _topic_stem(word)


def test_the_caps_differ_by_use() -> None:
    """One word, two uses: recall keeps seven letters, topic six."""
    assert RECALL_STEMMER("configurar") == "configu"
    assert TOPIC_STEMMER("configurar") == "config"
