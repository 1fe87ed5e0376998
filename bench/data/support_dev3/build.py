"""Assemble the hand-written sessions in src/sessions_*.txt into sessions.jsonl.

    python -m bench.data.support_dev3.build

The same source format and builder as `bench/data/support_train/build.py` (its docstring
describes the format); the ids are `w2-…` and the split `dev`. This set has sessions only,
no long cases, so only `sessions.jsonl` is written.
"""

from __future__ import annotations

from pathlib import Path

from bench.data.support_train.build import _write, build_sessions

HERE = Path(__file__).resolve().parent
SPLIT = "dev"

__all__ = ["build_sessions", "main"]


def main() -> None:
    sources = sorted((HERE / "src").glob("sessions_*.txt"))
    _write(HERE / "sessions.jsonl", build_sessions(sources, SPLIT))


if __name__ == "__main__":
    main()
