"""Text on its way to an operator's terminal: control characters shown, never obeyed."""

from __future__ import annotations

import json
import re
from typing import Any

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


def json_text(data: Any, **options: Any) -> str:
    """`data` as JSON for a terminal or a pipe: UTF-8 text kept readable, but every
    character `visible` would escape written as a `\\uXXXX` escape, so the JSON decodes
    to exactly what was stored and prints nothing a terminal acts on (`json` escapes C0
    itself; newline and tab appear only as the layout)."""
    text = json.dumps(data, ensure_ascii=False, **options)
    return _CONTROL.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
