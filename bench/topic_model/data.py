"""The topic model's support data: what it is fitted on and what is held out from it.

- `tests/data/topics/sessions.jsonl`, the labelled sessions the rules were written from,
  split once more (`split.json`, a seeded shuffle per language, made before any model
  was fitted to it): the trainer fits on its `fit` half; the `heldout` half is scored
  once per trained model, in aggregate (`heldout_scores`), and its misses are not read.
- `bench/data/support_train/sessions.jsonl` and `bench/data/support_dev/sessions.jsonl`,
  sessions written by sessions that read neither the detector nor any held-out set
  (their READMEs): all of them are fitted (`--written` names other files;
  `bench/data/support_multicase/` is held out).
- `longcase.jsonl` of the same two sets, long single cases (40 user turns each, one case
  from start to end), as sessions whose every turn after the first continues: the
  overnight returns, updates and status reports that must not reset (`--long`).

TIAGE dev, `bench/data/blind/`, `bench/data/support_multicase/` and
`bench/data/support_dev2/` (the long cases that measure the model) are never read here.
`bench/data/support_dev3/` (sessions written later) is not fitted by default: fitted, it
cost the held-out sets recall (its README); `--written` can name it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench import topics
from bench.blind.data import load_long_cases

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SPLIT = HERE / "split.json"
DATA = REPO / "bench" / "data"
WRITTEN = (DATA / "support_train" / "sessions.jsonl", DATA / "support_dev" / "sessions.jsonl")
LONG = (DATA / "support_train" / "longcase.jsonl", DATA / "support_dev" / "longcase.jsonl")
# support_dev2's held half (its README): never fitted, scored in aggregate only, whatever
# file names it. support_dev2 as a whole is not fitted by default: it measures the model.
HELD_LONG = frozenset({"dl2-es-03", "dl2-es-04", "dl2-en-03", "dl2-en-04"})


@dataclass(frozen=True, slots=True)
class SupportData:
    fit: tuple[topics.Session, ...]
    heldout: tuple[topics.Session, ...]
    written: tuple[topics.Session, ...]
    long: tuple[topics.Session, ...] = ()

    @property
    def training(self) -> tuple[topics.Session, ...]:
        return (*self.fit, *self.written, *self.long)


def load(
    labelled: Path = topics.DEFAULT_DATA,
    split: Path = SPLIT,
    written: Sequence[Path] | Path | None = WRITTEN,
    long: Sequence[Path] | Path | None = LONG,
) -> SupportData:
    """The labelled sessions by `split`'s halves, and the written ones (a file that is
    absent gives none). A labelled session the split does not name is an error: it would land on
    neither side silently."""
    halves = json.loads(split.read_text(encoding="utf-8"))
    fit_ids, held_ids = set(halves["fit"]), set(halves["heldout"])
    sessions = topics.load(labelled)
    unnamed = sorted(s.id for s in sessions if s.id not in fit_ids | held_ids)
    if unnamed:
        raise ValueError(f"{split.name} names no half for {', '.join(unnamed)}")
    fit = tuple(s for s in sessions if s.id in fit_ids)
    held = tuple(s for s in sessions if s.id in held_ids)
    files = (written,) if isinstance(written, Path) else tuple(written or ())
    extra = tuple(s for path in files if path.exists() for s in topics.load(path))
    longs = (long,) if isinstance(long, Path) else tuple(long or ())
    cases = tuple(s for path in longs if path.exists() for s in long_sessions(path))
    return SupportData(fit, held, extra, cases)


def long_sessions(path: Path = LONG[0]) -> tuple[topics.Session, ...]:
    """Long single cases (`bench.blind.data.load_long_cases`'s format) as sessions: the
    first turn opens the case, every other one continues it (kind `followup`). A case of
    support_dev2's held half (`HELD_LONG`) is never read into training."""
    out = []
    for case in load_long_cases(path):
        if case.id in HELD_LONG:
            continue
        said = case.turns
        turns = tuple(
            topics.Turn(
                said[i]["content"],
                said[i + 1]["content"],
                datetime.fromisoformat(said[i]["ts"].replace("Z", "+00:00")),
                "start" if i == 0 else "continue",
                "opening" if i == 0 else "followup",
            )
            for i in range(0, len(said), 2)
        )
        out.append(topics.Session(case.id, case.lang, "written", turns))
    return tuple(out)


def named(files: Sequence[Path]) -> str:
    """The written files that exist, as the model file records them (repo-relative)."""
    shown = [
        str(p.relative_to(REPO)) if p.is_absolute() and p.is_relative_to(REPO) else str(p)
        for p in files
        if p.exists()
    ]
    return ", ".join(shown) or "none"


def heldout_scores(
    sessions: Sequence[topics.Session], detect: topics.Detector
) -> dict[str, float | int]:
    """The held-out half's aggregate counts for `detect` (no turn, no session named)."""
    r = topics.evaluate(sessions, detect)
    return {
        "sessions": len(sessions),
        "precision": round(r.precision, 3),
        "recall": round(r.recall, 3),
        "fp": r.fp,
        "fn": r.fn,
        "tp": r.tp,
        "side_resets": r.side_resets,
    }
