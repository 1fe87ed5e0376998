"""The shortcuts `missing_facts` takes answer exactly as the value's regex search would."""

from __future__ import annotations

import re
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.facts.extract import _ODD_CASE, _PLAIN, Fact, _present, missing_facts
from memory.facts.presence import _value_pattern

# Plain and odd characters, case pairs that lower differently, and Unicode whitespace.
_ALPHABET = "aAiIsSkK09#-./:@€ñÑéÉ«»_ \n\t\u00a0\u2009İıſKµμΜΣσςßẞ\u0307"


def _fresh(value: str, text: str) -> bool:
    """The value's pattern, built afresh (not the cached one), searched in `text`."""
    pattern = _value_pattern.__wrapped__(value)
    return pattern is None or pattern.search(text) is not None


@settings(max_examples=1500)
@given(
    st.text(alphabet=_ALPHABET, min_size=0, max_size=6),
    st.text(alphabet=_ALPHABET, min_size=0, max_size=30),
    st.sampled_from([str, str.upper, str.lower, str.swapcase]),
)
@example("#A-5521", "ref #a- 5521.", str)
@example("PED-1", "XPED-1 PED-1", str)
@example("is", "İS", str)
@example("si", "ſı", str)
@example("12", "123 12", str)
def test_present_answers_as_a_fresh_search(value: str, text: str, case: object) -> None:
    assert callable(case)
    for haystack in (text, f"{case(value)} {text}", f"{text}{case(value)}x", case(text)):
        assert _present(value, haystack) == _fresh(value, haystack), (value, haystack)
        facts = [Fact("id", value), Fact("id", value.upper())]
        expected = [f for f in facts if not _fresh(f.value, haystack)]
        assert missing_facts(facts, haystack) == expected


def test_plain_characters_match_only_what_lowers_like_them() -> None:
    """Why the "not found" shortcut is safe: ignoring case, a plain character matches no
    character (but `_ODD_CASE`) that lowers to anything else, and whitespace lowers to
    itself."""
    everything = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000)
    for char in _PLAIN:
        assert len(char.lower()) == 1
        assert not char.isspace()
        for match in re.finditer(re.escape(char), everything, re.IGNORECASE):
            found = match.group()
            assert found in _ODD_CASE or found.lower() == char.lower(), (char, found)
    for char in everything:
        lowered = char.lower()
        assert char.isspace() == any(c.isspace() for c in lowered), char
        assert not char.isspace() or lowered == char, char
