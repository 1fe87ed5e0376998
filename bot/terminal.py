"""Text on its way to an operator's terminal: control characters shown, never obeyed."""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, but newline and tab: from a user or a model, an ESC or a CSI
# would recolour the terminal, move its cursor or retitle it; a carriage return or a
# backspace would hide what was written.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with each control character but newline and tab written as its escape
    (ESC as `\\x1b`): a terminal prints it instead of acting on it."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)
