"""Folding: how every reader of text compares words, lower-case and accent-free."""

from __future__ import annotations

import unicodedata

from memory.text.accents import strip_marks


def fold(text: str, *, apostrophes: bool = True) -> str:
    """Lower-case without accents (`Migración` → `migracion`), punctuation kept; without
    apostrophes too when `apostrophes` is false (`it’s` → `its`: the topic reading)."""
    if text.isascii():  # nothing for NFKD to split, no marks, no typographic apostrophe
        lowered = text.lower()
        return lowered if apostrophes else lowered.replace("'", "")
    plain = strip_marks(unicodedata.normalize("NFKD", text.lower()))
    return plain if apostrophes else plain.replace("'", "").replace("’", "")
