"""Assemble the hand-written long cases in src/longcase_*.txt into longcase.jsonl.

    python -m bench.data.support_dev2.build

The same source format and builder as `bench/data/support_train/build.py` (its docstring
describes the format); the ids are `dl2-…`. This set has long cases only, no sessions,
so only `longcase.jsonl` is written.
"""

from __future__ import annotations

from pathlib import Path

from bench.data.support_train.build import _write, build_longcases

HERE = Path(__file__).resolve().parent

__all__ = ["build_longcases", "main"]


def main() -> None:
    _write(HERE / "longcase.jsonl", build_longcases(sorted((HERE / "src").glob("longcase_*.txt"))))


if __name__ == "__main__":
    main()
