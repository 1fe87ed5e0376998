"""Splitting long replies into messages a channel accepts: the one splitter.

Each channel counts a message's length its own way, and passes that count as `length`:
Telegram in UTF-16 code units (4096 at most, `utf16_len`: an emoji outside the Basic
Multilingual Plane costs two), WhatsApp in characters (4096, `len`). A reply is cut at the
last paragraph break that keeps the chunk reasonably full, else a line break, a sentence
end, a space, and only for a run with no space at all in the middle of a word — never
inside an emoji sequence (ZWJ families, skin tones, flags, keycaps) when it can be helped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

TELEGRAM_LIMIT = 4096
Length = Callable[[str], int]  # grows with the text, a character at a time
_BOUNDARIES = (
    re.compile(r"\n[^\S\n]*\n\s*"),  # paragraph: a blank line
    re.compile(r"\n\s*"),  # line
    re.compile(r"(?<=[.!?…。！？;:])\s+"),  # sentence end
    re.compile(r"\s+"),  # word
)
_ZWJ = "\u200d"
_GLUE_BEFORE = frozenset("\u200d\ufe0e\ufe0f\u20e3")  # joins onto the previous character


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: two units for every character beyond U+FFFF."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def split_message(
    text: str, limit: int = TELEGRAM_LIMIT, *, length: Length = utf16_len
) -> list[str]:
    """Chunks of at most `limit` as `length` counts (UTF-16 units unless told otherwise);
    whitespace at the cuts is dropped."""
    widest = length(chr(0x1F600))  # an astral character: two UTF-16 units, one character
    if limit < widest:
        raise ValueError(f"limit must be at least {widest} (one astral character)")
    chunks: list[str] = []
    rest = text.strip()
    while rest:
        if length(rest) <= limit:
            chunks.append(rest)
            break
        cut = _cut(rest, _fit(rest, limit, length))
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [chunk for chunk in chunks if chunk]


def _fit(text: str, limit: int, length: Length) -> int:
    """How many characters of `text` fit in `limit` (at least one): the longest prefix
    within it, found by bisection (a character counts at least one)."""
    low, high = 0, min(len(text), limit)
    while low < high:
        middle = (low + high + 1) // 2
        if length(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return max(low, 1)


def _cut(text: str, end: int) -> int:
    """Where to cut `text`, given that its first `end` characters fit."""
    probe = text[: end + 1]  # a space right after the fitting part is a fine cut too
    for pattern in _BOUNDARIES:
        starts = [m.start() for m in pattern.finditer(probe) if 0 < m.start() <= end]
        if starts and starts[-1] >= end // 2:
            return starts[-1]
    for cut in range(end, 0, -1):
        if _safe_break(text, cut):
            return cut
    return end


def _safe_break(text: str, index: int) -> bool:
    """Whether cutting before `text[index]` keeps every emoji sequence whole."""
    before, after = text[index - 1], text[index]
    if before == _ZWJ or after in _GLUE_BEFORE or _is_modifier(after):
        return False
    if unicodedata.combining(after) or unicodedata.category(after) in ("Mn", "Me"):
        return False
    if _is_regional(after) and _is_regional(before):
        run = 0
        while index - run - 1 >= 0 and _is_regional(text[index - run - 1]):
            run += 1
        return run % 2 == 0  # flags are pairs: cut only between two complete ones
    return True


def _is_modifier(char: str) -> bool:
    code = ord(char)
    return 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F  # skin tones, tags


def _is_regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF
