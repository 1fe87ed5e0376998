"""The topic model's support data: what it is fitted on and what is held out from it.

- `tests/data/topics/sessions.jsonl`, the labelled sessions the rules were written from,
  split once more (`split.json`, a seeded shuffle per language, made before any model
  was fitted to it): the trainer fits on its `fit` half; the `heldout` half is scored
  once per trained model, in aggregate (`heldout_scores`), and its misses are not read.
- `bench/data/support_train/sessions.jsonl`, sessions written for training by a session
  that read neither the detector nor any held-out set (its README): all of it is fitted
  (`--written` may name more files; `bench/data/support_multicase/` is held out).

TIAGE dev and `bench/data/blind/` are never read here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import topics

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SPLIT = HERE / "split.json"
WRITTEN = (REPO / "bench" / "data" / "support_train" / "sessions.jsonl",)


@dataclass(frozen=True, slots=True)
class SupportData:
    fit: tuple[topics.Session, ...]
    heldout: tuple[topics.Session, ...]
    written: tuple[topics.Session, ...]

    @property
    def training(self) -> tuple[topics.Session, ...]:
        return (*self.fit, *self.written)


def load(
    labelled: Path = topics.DEFAULT_DATA,
    split: Path = SPLIT,
    written: Sequence[Path] | Path | None = WRITTEN,
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
    return SupportData(fit, held, extra)


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
