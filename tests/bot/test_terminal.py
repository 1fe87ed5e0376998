"""`visible`: what reaches an operator's terminal shows control characters, never obeys
them, and shows invisible format characters, never hides them."""

from __future__ import annotations

import json
import sys
import unicodedata

import pytest

from bot.terminal import json_text, visible


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a \x1b[31mred\x1b[0m b", "a \\x1b[31mred\\x1b[0m b"),  # ESC: colours, cursor moves
        ("\x9b2J", "\\x9b2J"),  # C1 CSI: clears the screen on terminals that take it
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # sets the window title, BEL ends it
        ("secret\rlie", "secret\\x0dlie"),  # a carriage return would hide "secret"
        ("ab\x08\x7f\x00", "ab\\x08\\x7f\\x00"),  # backspace, DEL, NUL
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),  # layout is kept
        ("ñandú ✓ ␛ [b]x[/b] \\x1b", "ñandú ✓ ␛ [b]x[/b] \\x1b"),  # printable: as written
        ("pay \u202egnp.exe", "pay \\u202egnp.exe"),  # a right-to-left override reorders
        ("a\u2066b\u2069c", "a\\u2066b\\u2069c"),  # isolates too
        ("👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"),  # a joiner binds an emoji: kept
        ("🏳\ufe0f\u200d🌈 👩🏽\u200d💻", "🏳\ufe0f\u200d🌈 👩🏽\u200d💻"),  # with VS16, skin tone
        ("ad\u200bmin", "ad\\u200bmin"),  # zero width space: two names that look alike
        ("pa\u200cy\u200dpal", "pa\\u200cy\\u200dpal"),  # (non-)joiners between letters
        ("\u200d👨 👨\u200d", "\\u200d👨 👨\\u200d"),  # a joiner that joins no two emoji
        ("\ufeffhola\u2060", "\\ufeffhola\\u2060"),  # BOM, word joiner
        ("in\xadvisible \u180e\u2061\u2064", "in\\xadvisible \\u180e\\u2061\\u2064"),
        ("ok\U000e0041\U000e0042", "ok\\U000e0041\\U000e0042"),  # tags: hidden ASCII
    ],
)
def test_control_characters_are_shown_escaped(text: str, shown: str) -> None:
    """Each C0/C1 control but newline and tab, and each format character, becomes its
    escape (`\\xNN`, `\\uNNNN`, `\\UNNNNNNNN`); the rest stays."""
    assert visible(text) == shown


def test_json_for_a_terminal_escapes_what_it_would_obey_and_decodes_the_same() -> None:
    """C1 controls, DEL and overrides become `\\uXXXX`; accents stay readable; same data."""
    data = {"text": "ñandú \x9b2J \x7f \u202eexe \x1b[0m ✓"}
    text = json_text(data)
    assert not {"\x9b", "\x7f", "\u202e", "\x1b"} & set(text)
    assert "ñandú" in text
    assert "✓" in text
    assert json.loads(text) == data


def test_every_format_character_is_escaped_and_nothing_printable() -> None:
    """The escaped set is this Python's Unicode category Cf (a joiner alone, outside
    emoji), the controls and the few blanks of other categories (Hangul fillers, the
    combining grapheme joiner, the line and paragraph separators): nothing else,
    unassigned code points aside."""
    blanks = {"U+034F", "U+115F", "U+1160", "U+2028", "U+2029", "U+3164", "U+FFA0"}
    categories: dict[str, str] = {}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        escaped = visible(char) != char
        if category == "Cf" or (category == "Cc" and char not in "\n\t"):
            assert escaped, f"U+{code:04X} ({category}) is not escaped"
        elif escaped:
            categories[f"U+{code:04X}"] = category
    assert {c for c, category in categories.items() if category != "Cn"} == blanks


def test_json_escapes_format_characters_and_decodes_the_same() -> None:
    """Zero-width and tag characters become `\\uXXXX` (a surrogate pair beyond the BMP);
    an emoji's joiner stays; the JSON decodes to exactly the stored text."""
    data = {"text": "ad\u200bmin \ufeff\xad 👨\u200d👩 ok\U000e0041\U000e007f"}
    text = json_text(data)
    assert not {"\u200b", "\ufeff", "\xad", "\U000e0041", "\U000e007f"} & set(text)
    assert "\\u200b" in text
    assert "\\udb40\\udc41" in text
    assert "👨\u200d👩" in text
    assert json.loads(text) == data
