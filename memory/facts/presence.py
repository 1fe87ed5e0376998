"""Whether a summary still says a fact: its value anywhere, whitespace and case aside."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from memory.facts.rules import _ODD_CASE, Fact


def missing_facts(facts: Iterable[Fact], text: str) -> list[Fact]:
    """Facts whose value does not appear in `text` (ignoring case and whitespace)."""
    haystack = _haystack(text)
    return [fact for fact in facts if not haystack.holds(fact.value)]


def _present(value: str, text: str) -> bool:
    """Whether `_value_pattern(value)` finds `value` in `text` (always, for a blank one)."""
    return _haystack(text).holds(value)


class _Haystack:
    """A text the guard looks for fact values in, with the answers given so far.

    The answer is always that of the value's pattern (`_value_pattern`) searched in the
    text; two shortcuts find most answers without that search, which scans the whole
    summary. A *no*: a plain value (`_squashed_value`) that is not even in the text
    lowercased without its whitespace cannot match, because every character a plain
    character matches, ignoring case, lowers to what it lowers to (unless the text holds
    one of `_ODD_CASE`; then this shortcut is off). A *yes*: where the value lowercased
    first appears in the text lowercased, the pattern matching right there confirms it.
    """

    __slots__ = ("answers", "lowered", "squashed", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower()
        odd = any(char in text for char in _ODD_CASE)
        self.squashed = None if odd else "".join(self.lowered.split())
        self.answers: dict[str, bool] = {}

    def holds(self, value: str) -> bool:
        answer = self.answers.get(value)
        if answer is None:
            answer = self.answers[value] = self._search(value)
        return answer

    def _search(self, value: str) -> bool:
        pattern = _value_pattern(value)
        if pattern is None:
            return True
        squashed = _squashed_value(value)
        if squashed is not None and self.squashed is not None and squashed not in self.squashed:
            return False
        # An index into `text` too, unless lowering changed its length (only "İ" does):
        # the match there confirms it either way.
        start = self.lowered.find(value.lower())
        if start >= 0 and pattern.match(self.text, start) is not None:
            return True
        return pattern.search(self.text) is not None


@lru_cache(maxsize=64)
def _haystack(text: str) -> _Haystack:
    """Cached: one fold checks the same facts against the same few texts several times."""
    return _Haystack(text)


# Characters each of which matches, ignoring case, only characters that lower to what it
# lowers to (besides `_ODD_CASE`): printable ASCII and Latin-1 to Latin Extended-A, but
# for the micro sign (it matches the Greek mu), and some punctuation.
_LATIN = frozenset(map(chr, [*range(0x21, 0x7F), *range(0xA1, 0x180)]))
_PLAIN = (_LATIN - {"\u00b5", *_ODD_CASE}) | frozenset("€«»“”‘’…–—")


@lru_cache(maxsize=4096)
def _squashed_value(value: str) -> str | None:
    """`value` lowercased without whitespace when all its characters are `_PLAIN`."""
    squashed = "".join(value.split())
    return squashed.lower() if _PLAIN.issuperset(squashed) else None


@lru_cache(maxsize=4096)
def _value_pattern(value: str) -> re.Pattern[str] | None:
    """`value` as a regex: any whitespace between its characters, not inside a longer
    word; None when it is all whitespace (always present). Cached: the guard checks the
    same facts against every fold, and building the pattern char by char cost more than
    the search."""
    chars = [c for c in value if not c.isspace()]
    if not chars:
        return None
    body = r"\s*".join(re.escape(c) for c in chars)
    before = r"(?<!\w)" if _is_word(chars[0]) else ""
    after = r"(?!\w)" if _is_word(chars[-1]) else ""
    return re.compile(before + body + after, re.IGNORECASE)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"
