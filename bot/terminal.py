"""Text on its way to an operator's terminal: control characters shown, never obeyed;
invisible ones shown, never hidden."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

# C0 and C1 controls and DEL, but newline and tab: from a user or a model, an ESC or a CSI
# would recolour the terminal, move its cursor or retitle it; a carriage return or a
# backspace would hide what was written. And every format character (Unicode category Cf;
# a test checks the class against this Python's `unicodedata`): the bidirectional marks,
# embeddings, overrides and isolates reorder what follows on the line, so a stored text
# could show an operator other words than it holds; the zero-width ones (U+200B-U+200D,
# U+2060 word joiner, U+FEFF, the soft hyphen, tag characters) show nothing, so two texts
# that look the same could differ. One exception, as it is simple to tell: a zero-width
# joiner between two emoji stays, since it makes one emoji of them (a family, a rainbow
# flag; a subdivision flag is made of tag characters, and shown escaped).
# Everywhere else a joiner (and a non-joiner, which Persian writes inside words) is shown
# escaped: the operator sees the text as stored, not as it renders. Beyond Cf, the few
# characters that print as nothing or break a line (`_BLANK`): the Hangul fillers, the
# combining grapheme joiner, the line and paragraph separators.
_BLANK = "\u034f\u115f\u1160\u2028\u2029\u3164\uffa0"
_HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    + _BLANK
    + r"\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    r"\U000e0001\U000e0020-\U000e007f]"
)
_ZWJ = "\u200d"
_EMOJI_END = frozenset({"So", "Sk"})  # an emoji, or its skin tone, before a joiner
_VS16 = "\ufe0f"  # "show as emoji": it may come between the emoji and its joiner


def visible(text: str) -> str:
    """`text` with each control and format character but newline and tab written as its
    escape (ESC as `\\x1b`, a right-to-left override as `\\u202e`, a tag character as
    `\\U000e0041`): a terminal prints it instead of acting on it or hiding it."""
    return _HIDDEN.sub(_shown(_escape), text)


def json_text(data: Any, **options: Any) -> str:
    """`data` as JSON for a terminal or a pipe: UTF-8 text kept readable, but every
    character `visible` would escape written as a `\\uXXXX` escape (a surrogate pair
    beyond the BMP), so the JSON decodes to exactly what was stored and prints nothing a
    terminal acts on or hides (`json` escapes C0 itself; newline and tab appear only as
    the layout)."""
    text = json.dumps(data, ensure_ascii=False, **options)
    return _HIDDEN.sub(_shown(_json_escape), text)


def _shown(escape: Callable[[int], str]) -> Callable[[re.Match[str]], str]:
    def shown(match: re.Match[str]) -> str:
        char = match[0]
        if char == _ZWJ and _joins_emoji(match.string, match.start()):
            return char
        return escape(ord(char))

    return shown


def _joins_emoji(text: str, at: int) -> bool:
    """The joiner at `at` has an emoji on each side (before it, maybe its U+FE0F)."""
    if at == 0 or at + 1 == len(text):
        return False
    before = text[at - 2] if text[at - 1] == _VS16 and at > 1 else text[at - 1]
    after = text[at + 1]
    return unicodedata.category(before) in _EMOJI_END and unicodedata.category(after) == "So"


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
