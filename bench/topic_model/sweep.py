"""The shipped topic model's ranking and its threshold, on a written set it was not fitted to.

    python -m bench.topic_model.sweep --data bench/data/support_dev3 [--thresholds 0.25,0.45]
        [--quick]

Two questions the product's single figure (precision and recall at the shipped threshold)
cannot tell apart: does the support head *rank* a set's changes of case above its other
messages (then only the threshold holds recall back), or does it not (then no threshold
helps, and the features must change)?

- **Ranking**, on the gold episodes (each message against the episode since the last gold
  reset, as the trainer's rows): the area under the ROC curve of the head's probability,
  and the recall reached at precision 0.9, 0.95 and 0.99 by the best threshold for each.
  A message the detector decides before the model (the episode so far a bare greeting:
  the case is not open yet) ranks by its decision.
- **Per threshold**, run as the product runs it (episodes as predicted, the shipped head
  with only its support threshold changed): resets made (precision, recall, resets on
  distractors) and resets that stand once the soft reset's revert has undone some
  (`bench.topic_model.soft`); when the folder has `longcase.jsonl`, its long single cases
  read as sessions that never change case (every reset there is false: made, standing).
  `python -m bench.blind --data DIR` replays those cases whole, facts included.

Aggregate figures only. The blind folder is refused: `python -m bench.blind` alone reads
it. A written set is fitted data once its misses have been read (each set's README).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench import blind, topics
from bench.blind.data import load_topic_set
from bench.topic_model import data as support_data
from memory.topic.context import TopicContext
from memory.topic.learned import detect_learned
from memory.topic.model import load_model
from memory.types import Exchange

WINDOW = topics.DEFAULT_WINDOW
THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.45)
PRECISIONS = (0.9, 0.95, 0.99)
QUICK = 10

Probability = Callable[[TopicContext], float]


@dataclass(frozen=True, slots=True)
class Ranking:
    rows: int
    resets: int
    auc: float
    recall_at: dict[float, float]  # precision bar -> the best recall at or above it


def shipped_probability(ctx: TopicContext) -> float:
    """The shipped support head's probability of a reset; 1 or 0 for a decision made
    before the model."""
    decision = detect_learned(ctx, "support")
    p = decision.signals.get("p")
    return float(p) if isinstance(p, int | float) else float(decision.reset)


def gold_rows(
    sessions: Sequence[topics.Session], probability: Probability = shipped_probability
) -> list[tuple[float, bool]]:
    """(probability, gold reset) of every message but each session's first, against the
    last `WINDOW` exchanges of its gold episode."""
    rows: list[tuple[float, bool]] = []
    for session in sessions:
        episode: list[Exchange] = []
        for n, turn in enumerate(session.turns):
            reset = turn.label == "reset"
            if episode:
                previous = session.turns[n - 1].ts
                ctx = topics.turn_context(session, turn, episode[-WINDOW:], previous)
                rows.append((probability(ctx), reset))
            if reset:
                episode = []
            episode.append(Exchange(n + 1, 1, turn.user, turn.assistant, signal=True))
    return rows


def ranking(rows: Sequence[tuple[float, bool]]) -> Ranking:
    """AUC (ties count half) and the best recall at each precision bar, thresholds taken
    only between distinct probabilities (tied rows go in or out together)."""
    positives = sum(y for _, y in rows)
    negatives = len(rows) - positives
    ordered = sorted(rows, key=lambda r: -r[0])
    below_neg, auc_sum, i = negatives, 0.0, 0
    tp = fp = 0
    best = dict.fromkeys(PRECISIONS, 0.0)
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            j += 1
        pos = sum(y for _, y in ordered[i:j])
        neg = (j - i) - pos
        below_neg -= neg
        auc_sum += pos * (below_neg + neg / 2)
        tp, fp = tp + pos, fp + neg
        for bar in PRECISIONS:
            if positives and tp / (tp + fp) >= bar:
                best[bar] = max(best[bar], tp / positives)
        i = j
    auc = auc_sum / (positives * negatives) if positives and negatives else 0.0
    return Ranking(len(rows), positives, auc, best)


def at_threshold(threshold: float) -> topics.Detector:
    """The shipped support head, deciding at `threshold`."""
    model = replace(load_model("support"), threshold=threshold)
    return lambda ctx: detect_learned(ctx, "support", model)


def sets_of(folder: Path) -> list[tuple[str, list[topics.Session], bool]]:
    """(title, sessions, long cases?) of a written folder; the blind folder is refused."""
    if folder.resolve() == blind.DEFAULT_DATA.resolve():
        raise SystemExit("the blind folder is read by `python -m bench.blind` alone")
    sets = [
        (title, list(load_topic_set(folder / file, None)), False)
        for title, file in blind.topic_sets(folder, False)
    ]
    if (folder / "longcase.jsonl").exists():
        long = list(support_data.long_sessions(folder / "longcase.jsonl"))
        sets.append(("long cases", long, True))
    if not sets:
        raise SystemExit(f"{folder}: no sessions.jsonl, topic set or longcase.jsonl here")
    return sets


def _line(label: str, score: blind.TopicScore) -> str:
    r = score.result
    return (
        f"{label} P {r.precision:.2f} R {r.recall:.2f} (tp {r.tp}, fp {r.fp}); "
        f"distractors {score.distractor_resets} of {score.distractors}"
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Ranking]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.topic_model.sweep", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--data", type=Path, required=True, help="a written set's folder")
    parser.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    parser.add_argument("--quick", action="store_true", help=f"first {QUICK} sessions of each")
    args = parser.parse_args(argv)
    try:
        thresholds = [float(t) for t in args.thresholds.split(",")]
    except ValueError:
        parser.error(f"--thresholds: numbers separated by commas, not {args.thresholds!r}")
    shipped = load_model("support").threshold
    out: dict[str, Ranking] = {}
    for title, every, long in sets_of(args.data):
        sessions = every[:QUICK] if args.quick else every
        turns = sum(len(s.turns) - 1 for s in sessions)
        print(f"== {args.data.name}, {title}: {len(sessions)} sessions, {turns} messages")
        if not long:
            r = out[title] = ranking(gold_rows(sessions))
            bars = ", ".join(f"{b:.2f}: {r.recall_at[b]:.2f}" for b in PRECISIONS)
            print(f"  ranking (gold episodes): AUC {r.auc:.3f}; best recall at precision {bars}")
        for th in thresholds:
            detect, mark = at_threshold(th), " (shipped)" if th == shipped else ""
            made = blind.score_topics(sessions, detect, WINDOW)
            stand = blind.score_topics(sessions, detect, WINDOW, blind.standing)
            if long:
                print(f"  ≥ {th:<5}{mark} false resets made {made.result.fp}, "
                      f"standing {stand.result.fp}")  # fmt: skip
            else:
                print(f"  ≥ {th:<5}{mark} {_line('made', made)} | {_line('standing', stand)}")
    return out


if __name__ == "__main__":
    main()
