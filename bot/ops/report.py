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
    """One line of the report's `turns` (built by keyword: eighteen fields)."""

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
    # This turn's message continued the case a recent automatic reset closed: that reset
    # was undone (it does not stand), and why (`memory.soft_reset.revert`).
    reset_reverted: bool = False
    reset_revert_reason: str | None = None


@dataclass(slots=True)
class Report:
    tokenizer: str
    settings: dict[str, Any]
    turns: list[TurnReport] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    fold_input_tokens: int = 0
    fold_output_tokens: int = 0

    def sessions(self) -> list[str]:
        """The transcript's sessions, in the order of their first turn."""
        return list(dict.fromkeys(t.session for t in self.turns))

    def totals(self, session: str | None = None) -> dict[str, Any]:
        """Over the real turns (of `session`, or all): probes are left out, and a reset
        counts once it stands (a reverted one is counted apart)."""
        real = [t for t in self.turns if not t.probe and session in (None, t.session)]
        prompt = sum(t.prompt_tokens for t in real)
        full = sum(t.full_history_tokens for t in real)
        reverted = sum(1 for t in real if t.reset_reverted)
        return {
            "turns": len(real),
            "prompt_tokens": prompt,
            "full_history_tokens": full,
            "ratio": round(prompt / full, 4) if full else 0.0,
            "fold_calls": sum(t.fold_calls for t in real),
            "fold_input_tokens": self.fold_input_tokens if session is None else None,
            "fold_output_tokens": self.fold_output_tokens if session is None else None,
            "resets": sum(1 for t in real if t.reset) - reverted,  # the ones that stand
            "resets_reverted": reverted,
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
