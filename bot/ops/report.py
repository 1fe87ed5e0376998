"""The replay report and contexts, in DESIGN.md's command-line formats.

One `TurnReport` per transcript user line (probes flagged, left out of the totals); the
contexts are the chat requests, one line per turn, written apart.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True, kw_only=True)
class TurnReport:
    """One line of the report's `turns` (built by keyword: sixteen fields)."""

    session: str
    turn: int
    episode: int
    prompt_tokens: int
    full_history_tokens: int
    window_exchanges: int
    pending_exchanges: int
    summary_tokens: int
    fold_calls: int
    reset: bool
    reset_reason: str | None
    model_called: bool
    noise_reason: str | None = None
    recall_exchanges: int = 0
    recall_tokens: int = 0
    probe: bool = False


@dataclass(slots=True)
class Report:
    tokenizer: str
    settings: dict[str, Any]
    turns: list[TurnReport] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    fold_input_tokens: int = 0
    fold_output_tokens: int = 0

    def totals(self) -> dict[str, Any]:
        """Over the real turns: probes are left out."""
        real = [t for t in self.turns if not t.probe]
        prompt = sum(t.prompt_tokens for t in real)
        full = sum(t.full_history_tokens for t in real)
        return {
            "turns": len(real),
            "prompt_tokens": prompt,
            "full_history_tokens": full,
            "ratio": round(prompt / full, 4) if full else 0.0,
            "fold_calls": sum(t.fold_calls for t in real),
            "fold_input_tokens": self.fold_input_tokens,
            "fold_output_tokens": self.fold_output_tokens,
            "resets": sum(1 for t in real if t.reset),
            "recall_tokens": sum(t.recall_tokens for t in real),
        }

    def as_json(self) -> dict[str, Any]:
        """The report format of DESIGN.md (contexts are written apart)."""
        return {
            "tokenizer": self.tokenizer,
            "settings": self.settings,
            "turns": [asdict(t) for t in self.turns],
            "totals": self.totals(),
        }


def write_outputs(report: Report, out: Path | None, contexts: Path | None) -> None:
    if out is not None:
        out.write_text(
            json.dumps(report.as_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if contexts is not None:
        with contexts.open("w", encoding="utf-8") as fh:
            for line in report.contexts:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
