"""Assemble the hand-written conversations in src/sessions_*.txt into sessions.jsonl.

    python -m bench.data.support_multicase.build

The same source format and builder as `bench/data/support_train/build.py` (its docstring
describes the format), for sessions only: this set has no long cases (no longcase.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.data.support_train.build import build_sessions

HERE = Path(__file__).resolve().parent
SPLIT = "written"

__all__ = ["build_sessions", "main"]


def main(folder: Path = HERE, split: str = SPLIT) -> None:
    """`folder`'s src/sessions_*.txt into its sessions.jsonl."""
    sessions = build_sessions(sorted((folder / "src").glob("sessions_*.txt")), split)
    (folder / "sessions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sessions), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
