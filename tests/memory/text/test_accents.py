"""Accent stripping: the fast regex passes drop exactly the combining marks."""

from __future__ import annotations


def test_strip_marks_equals_the_per_character_definition() -> None:
    """Every code point, and marks next to letters: the regex passes drop exactly the
    characters `unicodedata.combining` flags (U+034F in the accent block is not one)."""
    import unicodedata

    from memory.text.accents import strip_marks

    every = "".join(map(chr, range(0x110000)))
    mixed = "e\u0301a\u034fn\u0303’€\u20d7x\u1ab0" * 3
    for text in (every, mixed, "plain ascii"):
        assert strip_marks(text) == "".join(c for c in text if not unicodedata.combining(c))
