"""Text on its way to an operator's terminal: control characters shown, never obeyed."""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, but newline and tab: from a user or a model, an ESC or a CSI
# would recolour the terminal, move its cursor or retitle it; a carriage return or a
# backspace would hide what was written. And the bidirectional embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069): they reorder what follows on the line, so a
# stored text could show an operator other words than it holds. Joiners stay (emoji).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with each control character but newline and tab written as its escape
    (ESC as `\\x1b`, a right-to-left override as `\\u202e`): a terminal prints it
    instead of acting on it."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
