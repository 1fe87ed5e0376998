"""Topic changes in support sessions, Spanish and English: the learned model and the rules.

    python -m bench.topics [--data PATH] [--window N] [--verbose]

`tests/data/topics/sessions.jsonl` holds one session a line: `{"id", "lang", "split",
"exchanges": [{"user", "assistant", "ts", "label": "start"|"continue"|"reset", "kind"}]}`.
Boundaries are of several kinds (`closure_new`: the case closed, then a new subject;
`return_new`: a return days later with a new problem; `abrupt`: a change of intent inside
an open case) and so are the distractors that must continue (`side_question`, `aside`,
`thanks`, `other_domain`: a word of another domain such as an email or a payment,
`return_same`: a return days later to the same case; the blind sets add `update` and
`status`).

Each session runs through each arm as the handler would: the window is the last N
exchanges of the current episode, a predicted reset starts a new episode at that message,
no summary, idle resets off (the default). Arms, in the same run, each timed per turn:
the learned model at the support threshold (the product's `heuristic` mode) and the
hand-written rules of the support profile (the baseline), plus the naive "reset on every
new-request cue" rule.

The labelled set is TRAINING data for the rules (written after reading its misses) and,
for its `fit` half (`bench/topic_model/split.json`), for the model; the model's figure on
the other half is printed by its trainer, in aggregate. Here its figures say the fit
holds, nothing more. The
held-out figures come from the blind sets, `python -m bench.blind` (same arms, aggregate
figures only); this bench returns no target.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.common import Target, ms, percentile
from bench.topic_tiage import clear_topic_caches, timed
from memory.topic.cues import NEW_REQUEST
from memory.topic.decide import SUPPORT_TUNING, TopicContext, detect_learned, detect_rules
from memory.topic.text import new_request_hits
from memory.types import Exchange, TopicDecision

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "tests" / "data" / "topics" / "sessions.jsonl"
DEFAULT_WINDOW = 6
SIDE_KINDS = frozenset(
    {"side_question", "aside", "thanks", "other_domain", "return_same", "update", "status"}
)

Detector = Callable[[TopicContext], TopicDecision]


@dataclass(frozen=True, slots=True)
class Turn:
    user: str
    assistant: str
    ts: datetime
    label: str
    kind: str


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    lang: str
    split: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Result:
    tp: int
    fp: int
    fn: int
    side_resets: int
    misses: tuple[str, ...]  # "session#turn kind": what went wrong, for --verbose

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def load(path: Path = DEFAULT_DATA) -> list[Session]:
    sessions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            turns = tuple(
                Turn(
                    t["user"],
                    t["assistant"],
                    datetime.fromisoformat(t["ts"]),
                    t["label"],
                    t["kind"],
                )
                for t in raw["exchanges"]
            )
            sessions.append(Session(raw["id"], raw["lang"], raw["split"], turns))
    return sessions


def learned(ctx: TopicContext) -> TopicDecision:
    """The product's detector: the learned model at the support threshold."""
    return detect_learned(ctx, "support")


def rules(ctx: TopicContext) -> TopicDecision:
    """The baseline arm: the hand-written rules of the support profile."""
    return detect_rules(ctx, SUPPORT_TUNING)


def either(ctx: TopicContext) -> TopicDecision:
    """The combination arm: the learned model's reset, else the rules' reset."""
    decision = learned(ctx)
    return decision if decision.reset else rules(ctx)


def cue_only(ctx: TopicContext) -> TopicDecision:
    """The naive baseline: any new-request cue resets."""
    hit = bool(ctx.window) and bool(new_request_hits(ctx.message, NEW_REQUEST))
    return TopicDecision("reset" if hit else "continue", "cue", {})


def turn_context(
    session: Session, turn: Turn, window: Sequence[Exchange], last: datetime | None
) -> TopicContext:
    """What the detector sees of `turn`: the episode's last exchanges, no summary, no
    idle reset (the benches score the topic decision alone)."""
    return TopicContext(
        message=turn.user,
        window=tuple(window),
        summary="",
        now=turn.ts,
        last_activity=last,
        idle_reset_hours=0,
        summary_rounds=0,
        language=session.lang,
    )


def predict(session: Session, detect: Detector, window: int = DEFAULT_WINDOW) -> list[bool]:
    """Whether the detector resets at each turn (False for the first)."""
    episode: list[Exchange] = []
    out: list[bool] = []
    last: datetime | None = None
    for n, turn in enumerate(session.turns):
        ctx = turn_context(session, turn, episode[-window:], last)
        reset = bool(episode) and detect(ctx).reset
        out.append(reset)
        if reset:
            episode = []
        episode.append(Exchange(n + 1, 1, turn.user, turn.assistant, signal=True))
        last = turn.ts
    return out


Predictor = Callable[[Session, Detector, int], list[bool]]


def evaluate(
    sessions: Sequence[Session],
    detect: Detector,
    window: int = DEFAULT_WINDOW,
    run: Predictor | None = None,
) -> Result:
    """Counts of `run`'s resets (every reset the detector makes, by default: `predict`)."""
    tp = fp = fn = side = 0
    misses: list[str] = []
    for session in sessions:
        for n, (turn, reset) in enumerate(
            zip(session.turns, (run or predict)(session, detect, window), strict=True)
        ):
            gold = turn.label == "reset"
            tp += gold and reset
            fp += reset and not gold
            fn += gold and not reset
            side += reset and turn.kind in SIDE_KINDS
            if gold != reset:
                misses.append(f"{session.id}#{n} {turn.kind} {'FP' if reset else 'FN'}")
    return Result(tp, fp, fn, side, tuple(misses))


def _line(name: str, r: Result, seconds: Sequence[float] = ()) -> str:
    cost = f"  p50 {ms(percentile(seconds, 50))}/turn" if seconds else ""
    return (
        f"  {name:<30} precision {r.precision:5.2f}  recall {r.recall:5.2f}  "
        f"(tp {r.tp}, fp {r.fp}, fn {r.fn})  resets on distractors {r.side_resets}{cost}"
    )


ARMS: tuple[tuple[str, Detector], ...] = (
    ("learned (support profile)", learned),
    ("rules baseline (support)", rules),
)


def _arms(sessions: Sequence[Session], window: int) -> dict[str, Result]:
    """Every arm over the same sessions, each timed per turn from cold text caches."""
    results: dict[str, Result] = {}
    for name, detect in ARMS:
        clear_topic_caches()
        clocked, seconds = timed(detect)
        results[name] = evaluate(sessions, clocked, window)
        print(_line(name, results[name], seconds))
    return results


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--verbose", action="store_true", help="the labelled set's misses")
    parser.add_argument("--quick", action="store_true", help="same run (it is fast)")
    args = parser.parse_args(argv)
    sessions = load(args.data)
    turns = sum(len(s.turns) - 1 for s in sessions)
    print(
        f"== topic (labelled support sessions, TRAINING data: the rules were written from "
        f"it, the model is fitted to half of it): {len(sessions)} sessions, {turns} turns"
    )
    results = _arms(sessions, args.window)
    print(_line("baseline: reset on any cue", evaluate(sessions, cue_only, args.window)))
    if args.verbose:
        for miss in results[ARMS[0][0]].misses:
            print("    " + miss)
    return []  # held-out figures and targets: `python -m bench.blind`


if __name__ == "__main__":
    main()
