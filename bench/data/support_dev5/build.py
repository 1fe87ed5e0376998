"""Assemble the hand-written sessions and long cases in src/*.txt into the JSONL files.

    python -m bench.data.support_dev5.build

The same source format and builder as `bench/data/support_train/build.py` (its docstring
describes the format); the ids are `w5-…` (sessions) and `dl5-…` (long cases), the split
`dev`.
"""

from __future__ import annotations

from pathlib import Path

from bench.data.support_train.build import build_longcases, build_sessions
from bench.data.support_train.build import main as _main

HERE = Path(__file__).resolve().parent
SPLIT = "dev"

__all__ = ["build_longcases", "build_sessions", "main"]


def main() -> None:
    _main(HERE, SPLIT)


if __name__ == "__main__":
    main()
