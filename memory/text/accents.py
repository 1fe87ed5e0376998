"""Accent stripping shared by the topic heuristic and the noise filter.

`strip_marks(s)` equals `"".join(c for c in s if not unicodedata.combining(c))`, the
definition both modules used, but a per-character Python loop cost ~40 µs per 1,000
characters and every new message, reply and summary goes through it.
"""

from __future__ import annotations

import re
import unicodedata

_FIRST_MARK = 0x300  # no character below U+0300 is a combining mark
_COMMON_BLOCK = range(_FIRST_MARK, 0x370)  # Combining Diacritical Marks: what NFKD splits off


def _ranges(codes: list[int]) -> str:
    """A regex class of `codes` as ranges (U+0300-U+034E, ...). A single class without a
    repeat lets the regex engine skip ahead fast; a long list or a `+` was 2.5x slower."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs)


# The block holds one non-mark (U+034F, the grapheme joiner), so it is two ranges.
_COMMON_MARKS = re.compile(
    f"[{_ranges([c for c in _COMMON_BLOCK if unicodedata.combining(chr(c))])}]"
)
_MAYBE_MARK = re.compile(f"[^\\x00-{re.escape(chr(_FIRST_MARK - 1))}]")


def strip_marks(text: str) -> str:
    """`text` without combining marks (accents once NFKD has split them off).

    The usual marks go in one regex pass; only the rare characters left at or above
    U+0300 (’, €, other scripts) are looked at one by one."""
    if text.isascii():
        return text
    return _MAYBE_MARK.sub(_unless_mark, _COMMON_MARKS.sub("", text))


def _unless_mark(match: re.Match[str]) -> str:
    char = match.group()
    return "" if unicodedata.combining(char) else char
