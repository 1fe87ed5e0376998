"""Blind held-out sets: topic switches and long single cases, aggregate figures only.

    python -m bench.blind [--quick] [--data DIR] [--split fit|held] [--jobs N]
                          [--own-language]

`--data bench/data/support_dev` (or `support_train`) scores a written dev set the same
way (its `sessions.jsonl` and `longcase.jsonl`), with no targets: those sets may be read.
A written set split into a fit and a held half (its `split.json`: support_dev2,
support_dev4, support_dev5) is scored one half at a time with `--split`.

`bench/data/blind/` was written without reading the detector, the fold-in, recall or the
labelled sets (its README says how); it is scored, never read for misses, so this bench
prints no turn, no session and no fact it got wrong: only counts.

- **Topic arms** on `varied.jsonl` and `multicase_es.jsonl` (the `bench.topics` format):
  the product's learned detector (`bench.topics.learned`), the hand-written rules
  (`bench.topics.rules`), their union (`bench.topics.either`) and the naive cue baseline
  (`bench.topics.cue_only`), run as the handler would (`bench.topics.predict`); precision
  and recall of resets, and the resets on distractors (side questions, asides, thanks,
  another domain's word, returns to the same case, updates, status reports). One more
  row, "learned, resets that stand", replays the product's detector with the soft
  reset's revert (`bench.topic_model.soft`): a reset one of the next messages undoes
  does not stand, and a real reset undone that way counts as missed.
- **Long-case arm** on `longcase.jsonl`: each case, one open case from start to end, is
  replayed through the real CLI (`python -m bot replay`, the scripted assistant replies)
  with `--topic heuristic` and with `--topic off` (offline summarizer), and with
  `--topic heuristic` and a lossy summary model. Every automatic
  reset there is false: a reset stands unless the report marks it reverted
  (`reset_reverted`). The last chat request (`--contexts`, last line) is searched for the
  planted facts, verbatim. Every case runs in the product's default language (Spanish
  summary lines and key-fact words) unless `--own-language` sets `VENTANA_LANGUAGE` to
  the case's, as an English support bot would be deployed.

Targets (issue 28's, on sets like these): varied precision ≥ 0.9, recall ≥ 0.7, ≤ 1 false
reset per 328 distractors; Spanish multi-case precision and recall ≥ 0.9; long cases 0
standing resets and every planted fact in the last request, with the offline summarizer
and with a lossy summary model (a loopback OpenAI-compatible server started here, whose
summaries drop every identifier, amount and date: `--summary-model openai:lossy`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import topics
from bench.blind.data import (
    CONTINUE_KINDS,
    DEFAULT_DATA,
    DISTRACTOR_KINDS,
    DISTRACTOR_SCALE,
    LONGCASE,
    MULTICASE,
    RESET_KINDS,
    SPLIT,
    SPLITS,
    VARIED,
    BlindDataError,
    LongCase,
    held_ids,
    in_split,
    load_long_cases,
    load_topic_set,
    validate_topic_file,
)
from bench.blind.longcase import (
    LONG_ARMS,
    LongScore,
    long_line,
    replay_case,
    run_long_cases,
    score_replay,
)
from bench.blind.lossy import LossySummaryServer, lossy_summary
from bench.common import Target
from bench.topic_model.soft import predict_standing

__all__ = [
    "CONTINUE_KINDS",
    "DEFAULT_DATA",
    "DISTRACTOR_KINDS",
    "LONGCASE",
    "LONG_ARMS",
    "MULTICASE",
    "RESET_KINDS",
    "VARIED",
    "BlindDataError",
    "LongCase",
    "LongScore",
    "LossySummaryServer",
    "TopicScore",
    "load_long_cases",
    "load_topic_set",
    "lossy_summary",
    "main",
    "replay_case",
    "run_long_cases",
    "score_replay",
    "score_topics",
    "targets_for",
    "validate_topic_file",
]

QUICK_LONG_CASES = 2  # --quick: the first Spanish and the first English case

# ---------------------------------------------------------------- topic arms


@dataclass(frozen=True, slots=True)
class TopicScore:
    result: topics.Result  # tp/fp/fn; its `misses` are never printed
    distractors: int
    distractor_resets: int
    resets: int  # gold resets

    @property
    def per_scale(self) -> float:
        """False resets on distractors per DISTRACTOR_SCALE of them."""
        return (
            self.distractor_resets * DISTRACTOR_SCALE / self.distractors
            if self.distractors
            else 0.0
        )


def score_topics(
    sessions: Sequence[topics.Session],
    detect: topics.Detector,
    window: int = topics.DEFAULT_WINDOW,
    run: topics.Predictor = topics.predict,
) -> TopicScore:
    result = topics.evaluate(sessions, detect, window, run)
    distractors = distractor_resets = resets = 0
    for session in sessions:
        predicted = run(session, detect, window)
        for turn, reset in zip(session.turns, predicted, strict=True):
            resets += turn.label == "reset"
            if turn.kind in DISTRACTOR_KINDS:
                distractors += 1
                distractor_resets += reset
    return TopicScore(result, distractors, distractor_resets, resets)


def _topic_line(name: str, s: TopicScore) -> str:
    r = s.result
    return (
        f"  {name:<28} precision {r.precision:4.2f}  recall {r.recall:4.2f}  "
        f"(tp {r.tp}, fp {r.fp}, fn {r.fn})  "
        f"false resets on distractors {s.distractor_resets} of {s.distractors}"
    )


def standing(session: topics.Session, detect: topics.Detector, window: int) -> list[bool]:
    """The resets that stand once the soft reset has reverted those the next messages
    undo (`bench.topic_model.soft`)."""
    return predict_standing(session, detect, window)[0]


STANDING = "learned, resets that stand"
DETECTORS: tuple[tuple[str, topics.Detector], ...] = (
    ("learned (product)", topics.learned),
    ("rules (baseline)", topics.rules),
    ("learned or rules", topics.either),
    ("baseline: reset on any cue", topics.cue_only),
)


def run_topic_set(
    title: str, sessions: Sequence[topics.Session], window: int
) -> dict[str, TopicScore]:
    turns = sum(len(s.turns) - 1 for s in sessions)
    gold = sum(t.label == "reset" for s in sessions for t in s.turns)
    print(f" {title}: {len(sessions)} sessions, {turns} turns, {gold} resets")
    scores = {}
    for name, detect in DETECTORS:
        scores[name] = score_topics(sessions, detect, window)
        print(_topic_line(name, scores[name]))
    scores[STANDING] = score_topics(sessions, topics.learned, window, standing)
    print(_topic_line(STANDING, scores[STANDING]))
    return scores


# ---------------------------------------------------------------- targets and main


def targets_for(
    varied: TopicScore | None,
    multicase: TopicScore | None,
    long: LongScore | None,
    lossy: LongScore | None = None,
) -> list[Target]:
    out: list[Target] = []
    if varied is not None:
        r = varied.result
        out += [
            Target("blind", "varied precision", r.precision, 0.9, "high", f"{r.precision:.2f}"),
            Target("blind", "varied recall", r.recall, 0.7, "high", f"{r.recall:.2f}"),
            Target(
                "blind",
                f"varied false resets per {DISTRACTOR_SCALE} distractors",
                varied.per_scale,
                1,
                "low",
                f"{varied.per_scale:.1f} ({varied.distractor_resets}/{varied.distractors})",
            ),
        ]
    if multicase is not None:
        r = multicase.result
        out += [
            Target(
                "blind", "multi-case es precision", r.precision, 0.9, "high", f"{r.precision:.2f}"
            ),
            Target("blind", "multi-case es recall", r.recall, 0.9, "high", f"{r.recall:.2f}"),
        ]
    if long is not None:
        share = long.facts_kept / long.facts if long.facts else 0.0
        out += [
            Target(
                "blind", "long cases: standing resets", long.standing, 0, "low", str(long.standing)
            ),
            Target(
                "blind",
                "long cases: planted facts in last request",
                share,
                1.0,
                "high",
                f"{long.facts_kept}/{long.facts}",
                limit_shown="all",
            ),
        ]
    if lossy is not None:
        share = lossy.facts_kept / lossy.facts if lossy.facts else 0.0
        standing = lossy.standing
        out.append(
            Target(
                "blind", "long cases, lossy summary: standing resets", standing, 0, "low",
                str(standing),
            )
        )  # fmt: skip
        out.append(
            Target(
                "blind",
                "long cases, lossy summary: facts in last request",
                share,
                1.0,
                "high",
                f"{lossy.facts_kept}/{lossy.facts}",
                limit_shown="all",
            )
        )
    return out


# Another written set's sessions (`bench/data/support_dev/`, `support_train/`): scored the
# same way when `--data` names its folder.
OTHER_SETS = (("sessions", "sessions.jsonl"),)


def topic_sets(folder: Path, blind: bool) -> list[tuple[str, str]]:
    """The topic sets to score in `folder`, (title, file) each: the blind folder's two
    (both required: a missing one is an error when loaded), a written set's that exist."""
    named = (("varied es/en", VARIED), ("multi-case es", MULTICASE))
    if blind:
        return list(named)
    return [(title, file) for title, file in (*named, *OTHER_SETS) if (folder / file).exists()]


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.blind", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the blind set's folder")
    parser.add_argument("--window", type=int, default=topics.DEFAULT_WINDOW)
    parser.add_argument("--jobs", type=int, default=2, help="replays run at a time")
    parser.add_argument(
        "--split", choices=SPLITS, default="all", help="a written set's fit or held half"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"topic arms in full (fast); long cases: the first {QUICK_LONG_CASES} only",
    )
    parser.add_argument(
        "--own-language",
        action="store_true",
        help="long cases: each replayed with VENTANA_LANGUAGE set to its own language"
        " (default: the product's, Spanish, for every case)",
    )
    args = parser.parse_args(argv)

    blind = args.data.resolve() == DEFAULT_DATA.resolve()
    if blind and args.split != "all":
        parser.error("the blind sets are held out whole: no --split")
    held = None if blind else held_ids(args.data)
    if args.split != "all" and held is None:
        parser.error(f"{args.data.name}/ has no {SPLIT}: it is not split into halves")

    def chosen(item_id: str) -> bool:
        return in_split(item_id, held, args.split)

    # a written set may hold sessions only (`support_multicase/`); the blind one has both
    has_long = blind or (args.data / LONGCASE).exists()
    cases = load_long_cases(args.data / LONGCASE) if has_long else []
    cases = [c for c in cases if chosen(c.id)]
    half = "" if args.split == "all" else f", {args.split} half"
    print(
        f"== {'blind held-out' if blind else 'written'} sets ({args.data.name}/{half}):"
        f" aggregate figures only, window {args.window}"
    )
    scores: dict[str, dict[str, TopicScore]] = {}
    for title, file in topic_sets(args.data, blind):
        sessions = load_topic_set(args.data / file, "blind" if blind else None)
        sessions = [s for s in sessions if chosen(s.id)]
        if sessions:
            scores[file] = run_topic_set(title, sessions, args.window)

    if not cases:
        print(f" long single cases: none in {args.data.name}/{half}")
        return []
    if args.quick:
        picked = [next(c for c in cases if c.lang == lang) for lang in ("es", "en")]
        cases = picked[:QUICK_LONG_CASES]
    user_turns = sum(c.user_turns for c in cases)
    facts = sum(len(c.facts) for c in cases)
    print(
        f" long single cases: {len(cases)} cases, {user_turns} user turns, {facts} planted facts"
        " (replay, offline chat model, scripted replies"
        + (", each in its own VENTANA_LANGUAGE)" if args.own_language else ")")
    )
    long_scores = run_long_cases(cases, LONG_ARMS, args.jobs, own_language=args.own_language)
    for arm in LONG_ARMS:
        print(long_line(arm, long_scores[arm[0]]))
    on, off, lossy = (long_scores[name] for name, _, _ in LONG_ARMS)
    print(
        f"  side by side (heuristic | off | heuristic + lossy summary): standing resets "
        f"{on.standing} | {off.standing} | {lossy.standing}; facts in the last request "
        f"{on.facts_kept} | {off.facts_kept} | {lossy.facts_kept} of {on.facts}"
    )
    if not blind:  # a written dev set: figures to read, no targets
        return []
    name = DETECTORS[0][0]
    return targets_for(scores[VARIED][name], scores[MULTICASE][name], on, lossy)
