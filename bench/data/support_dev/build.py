"""Assemble the hand-written conversations in src/*.txt into the two JSONL files.

    python -m bench.data.support_dev.build

The same source format and builder as `bench/data/support_train/build.py` (its docstring
describes the format); only the ids (`d-…`, `dl-…`) and the sessions' split (`dev`)
differ.
"""

from __future__ import annotations

from pathlib import Path

from bench.data.support_train.build import build_longcases, build_sessions
from bench.data.support_train.build import main as build

HERE = Path(__file__).resolve().parent
SPLIT = "dev"

__all__ = ["build_longcases", "build_sessions", "main"]


def main() -> None:
    build(HERE, SPLIT)


if __name__ == "__main__":
    main()
