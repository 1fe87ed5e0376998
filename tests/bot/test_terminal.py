"""`visible`: what reaches an operator's terminal shows control characters, never obeys them."""

from __future__ import annotations

import json

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
    ],
)
def test_control_characters_are_shown_escaped(text: str, shown: str) -> None:
    """Each C0/C1 control but newline and tab becomes its `\\xNN` escape; the rest stays."""
    assert visible(text) == shown


def test_json_for_a_terminal_escapes_what_it_would_obey_and_decodes_the_same() -> None:
    """C1 controls, DEL and overrides become `\\uXXXX`; accents stay readable; same data."""
    data = {"text": "ñandú \x9b2J \x7f \u202eexe \x1b[0m ✓"}
    text = json_text(data)
    assert not {"\x9b", "\x7f", "\u202e", "\x1b"} & set(text)
    assert "ñandú" in text
    assert "✓" in text
    assert json.loads(text) == data
