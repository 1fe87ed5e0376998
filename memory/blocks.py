"""Labelled blocks of a request, and user text made unable to open or close one.

Every block the chat request is built from (the memory block, recall, the carry-over,
the previous case) is rendered by `render_block`, and every piece of conversation text
placed inside one of our delimiters (a block, the fold input) goes through `neutralize`
first. Whatever the path — said directly, folded into a summary, echoed by a summary
model, recalled — a user's `</memory>` then reaches the model as `[/memory>`: still
readable, no longer a tag (invariant 11).

What counts as a tag opener is broad on purpose. Matching runs on a *skeleton* of the
text, each character folded the way a reader sees through it: its compatibility form
(fullwidth `＜ｍｅｍｏｒｙ`, mathematical letters, ligatures), without format characters
(bidi controls, zero-width characters, tag characters, variation selectors), combining
marks or fillers (U+3164 and kin), lookalikes read as ASCII (`˂ ᐸ ‹ ＜` for `<`, `∕ ⁄ ／`
for `/`, Cyrillic, Greek and small-capital letters); and an HTML entity or percent escape
a model might decode (`&lt;`, `&#60;`, `&amp;lt;`, `%3C`, `%253C`) counts as `<`. A tag
spelled backwards after a right-to-left override (displayed forwards) counts too. Only
the opener is replaced; the rest is kept as written, so accents, emoji and other
scripts stay readable. Text that only mentions a tag name ("memory", "<3", "a < b",
"<memoryless>") is left as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

from memory.caches import WINDOW_TEXTS

# Blocks of the chat request. Other blocks use these names with `render_block`.
MEMORY_TAG = "memory"  # the cumulative summary
RECALL_TAG = "recall"  # older exchanges recalled verbatim
CARRY_OVER_TAG = "about_user"  # identity facts carried over by an automatic reset
CASE_TAG = "previous_case"  # the case facts of the episode an automatic reset closed
# Delimiters of the fold input (`memory/fold/summarizer.py`).
FOLD_TAGS = ("previous_summary", "transcript", "must_keep")
REQUEST_TAGS = (MEMORY_TAG, RECALL_TAG, CARRY_OVER_TAG, CASE_TAG)
# Every name neutralized in conversation text, whichever delimiter it sits in: a summary
# model may echo a fold tag into the summary, and a summary ends up in the memory block.
RESERVED_TAGS = frozenset((*REQUEST_TAGS, *FOLD_TAGS, "carry_over", "carry-over", "system"))

# What a user's tag opener becomes: visible, and no lookalike of `<` (as `‹` is).
SAFE_OPEN = "["

_AMP = r"&(?:amp;|#0*38;|#x0*26;)*"  # "&", possibly encoded again
_PERCENT = r"%(?:25)*"  # "%", possibly encoded again
_LESS_THAN = rf"(?:<|{_AMP}(?:lt;?|#0*60;?|#x0*3c;?)|{_PERCENT}3c)"
_SLASH = rf"(?:/|{_AMP}(?:sol;|#0*47;?|#x0*2f;?)|{_PERCENT}2f)"
# Invisible characters a model reads through (the skeleton drops the rest of them).
_INVISIBLE = r"[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]"
_SPACE = rf"(?:\s|{_INVISIBLE})*"
# Lookalikes NFKD leaves apart, read as the ASCII they imitate (lowercase: matching
# ignores case). Letters: those of the reserved names, and a few more of each script.
_LOOKALIKES = {
    **dict.fromkeys("˂ᐸ‹⟨〈❮", "<"),
    **dict.fromkeys("˃ᐳ›⟩〉❯", ">"),
    **dict.fromkeys("∕⁄⧸╱", "/"),
    # Cyrillic
    **dict(zip("авеікмнопрстухѕјԁһӏүѵ", "abeikmhonpctyxsjdhlyv", strict=True)),
    **dict(zip("АВЕІКМНОРСТУХЅЈ", "abeikmhopctyxsj", strict=True)),
    # Greek
    **dict(zip("αβεικμνορτυχϲ", "abeikuvoptuxc", strict=True)),
    **dict(zip("ΑΒΕΗΙΚΜΝΟΡΤΥΧΖ", "abehikmnoptyxz", strict=True)),
    # Small capitals and other Latin letters
    **dict(zip("ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıȷɑɡɩʋ", "abcdeghijklmnoprstuvwyzijagiv", strict=True)),
}
# Blank letters: categorized as letters, shown as nothing.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_DROPPED = frozenset(("Cf", "Mn", "Me"))  # format characters, combining marks
# Overrides and embeddings that show the text after them right to left.
_RIGHT_TO_LEFT = re.compile("[\u202b\u202e\u2067]")


def _name_pattern(name: str) -> str:
    """A tag name, with invisible characters allowed between its letters and `_`, `-`
    (or nothing) between its words."""
    letters = (r"[_\- ]?" if c in "_-" else re.escape(c) for c in name)
    return f"{_INVISIBLE}*".join(letters)


_SORTED_NAMES = sorted(RESERVED_TAGS, key=len, reverse=True)
_NAMES = "|".join(_name_pattern(n) for n in _SORTED_NAMES)
_OPENER = re.compile(
    rf"(?P<open>{_LESS_THAN}){_SPACE}(?:{_SLASH}{_SPACE})?(?:{_NAMES})(?![\w\-])", re.IGNORECASE
)
# The same opener spelled backwards: `>yromem/<` shows as `</memory>` after an override.
_REVERSED_NAMES = "|".join(_name_pattern(n[::-1]) for n in _SORTED_NAMES)
_REVERSED_OPENER = re.compile(
    rf"(?<![\w\-])(?:{_REVERSED_NAMES}){_SPACE}(?:/{_SPACE})?(?P<open><)", re.IGNORECASE
)
_OPENER_START = re.compile(r"[<&%]")
_TAG_NAME = re.compile(r"[a-z][a-z_]*")
_ATTR_NAME = re.compile(r"[a-z][a-z_-]*")
_ATTR_UNSAFE = re.compile(r"[^\w .,:+/-]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=WINDOW_TEXTS)
def neutralize(text: str) -> str:
    """`text` with the `<` (or its lookalike, entity or escape) of every reserved tag
    replaced by `SAFE_OPEN`; the rest is kept as written, so the text stays readable.
    Cached: the summary and the recalled pieces are rendered again every turn, and a
    text outside ASCII is folded to its skeleton one character at a time."""
    if text.isascii():  # the usual case: its own skeleton
        if _OPENER_START.search(text) is None:  # every opener starts with one of these
            return text
        shadow, origin = text, None
    else:
        shadow, origin = _skeleton(text)
        if _OPENER_START.search(shadow) is None:
            return text
    spans = [m.span("open") for m in _OPENER.finditer(shadow)]
    if origin is not None and _RIGHT_TO_LEFT.search(text):
        spans = sorted({*spans, *(m.span("open") for m in _REVERSED_OPENER.finditer(shadow))})
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        out += [text[at:start], SAFE_OPEN]
        at = end
    out.append(text[at:])
    return "".join(out)


def _skeleton(text: str) -> tuple[str, list[int]]:
    """Each character as a reader sees through it (`_fold`), and for each skeleton
    character the index it came from. ASCII runs are their own skeleton: only the other
    characters are folded one by one."""
    pieces: list[str] = []
    origin: list[int] = []
    at = 0
    for found in _NON_ASCII.finditer(text):
        index = found.start()
        pieces.append(text[at:index])
        origin.extend(range(at, index))
        folded = _fold(text[index])
        pieces.append(folded)
        origin += [index] * len(folded)
        at = index + 1
    pieces.append(text[at:])
    origin.extend(range(at, len(text)))
    return "".join(pieces), origin


@lru_cache(maxsize=8192)
def _fold(char: str) -> str:
    """One character's skeleton: its compatibility decomposition, without format
    characters, combining marks or fillers, lookalikes as ASCII; maybe nothing."""
    kept = []
    for part in unicodedata.normalize("NFKD", char):
        if part in _FILLERS or unicodedata.category(part) in _DROPPED:
            continue
        kept.append(_LOOKALIKES.get(part, part))
    return "".join(kept)


def render_block(tag: str, attrs: Mapping[str, object], label: str, body: str) -> str:
    """`<tag k="v">`, the label, a blank line, the neutralized body, `</tag>`.

    `tag` must be one of `REQUEST_TAGS` (so user text can never forge it); attribute
    values and the label are ours, and are cleaned or neutralized all the same."""
    if tag not in REQUEST_TAGS or not _TAG_NAME.fullmatch(tag):
        raise ValueError(f"unknown block tag: {tag!r} (add it to memory.blocks)")
    head = tag + "".join(f' {_attr_name(k)}="{_attr_value(v)}"' for k, v in attrs.items())
    return f"<{head}>\n{neutralize(label)}\n\n{neutralize(body)}\n</{tag}>"


def _attr_name(name: str) -> str:
    if not _ATTR_NAME.fullmatch(name):
        raise ValueError(f"bad block attribute name: {name!r}")
    return name


def _attr_value(value: object) -> str:
    """Ours (numbers, dates), yet kept to plain characters: no quote, `<` or entity."""
    return _ATTR_UNSAFE.sub(" ", str(value))
