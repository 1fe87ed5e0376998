"""Topic-change precision on hand-labelled support sessions, Spanish and English.

    python -m bench.topics [--data PATH] [--window N] [--verbose]

`tests/data/topics/sessions.jsonl` holds one session a line: `{"id", "lang", "split":
"dev"|"heldout", "exchanges": [{"user", "assistant", "ts", "label": "start"|"continue"|
"reset", "kind"}]}`. Boundaries are of several kinds (`closure_new`: the case closed, then
a new subject; `return_new`: a return days later with a new problem; `abrupt`: a change of
intent inside an open case) and so are the distractors that must continue (`side_question`,
`aside`, `thanks`, `other_domain`: a word of another domain such as an email or a payment,
`return_same`: a return days later to the same case).

Each session runs through the product's detector (`detect_heuristic` with the support
profile, the default) as the handler would: the window is the last N exchanges of the
current episode, a predicted reset starts a new episode at that message, no summary (the
sessions are shorter than a fold cycle matters for), idle resets off (the default). The
heuristic was tuned on the dev split only; the held-out split is reported apart.

Baseline, measured in the same run: "always continue" (precision undefined, recall 0) and
"reset on every new-request cue" (`by the way`, `por cierto`...), the naive rule.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.common import Target
from memory.topic.cues import NEW_REQUEST
from memory.topic.decide import SUPPORT_TUNING, TopicContext, detect_heuristic
from memory.topic.text import new_request_hits
from memory.types import Exchange, TopicDecision

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "tests" / "data" / "topics" / "sessions.jsonl"
DEFAULT_WINDOW = 6
SIDE_KINDS = frozenset({"side_question", "aside", "thanks", "other_domain", "return_same"})

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


def heuristic(ctx: TopicContext) -> TopicDecision:
    return detect_heuristic(ctx, SUPPORT_TUNING)


def cue_only(ctx: TopicContext) -> TopicDecision:
    """The naive baseline: any new-request cue resets."""
    hit = bool(ctx.window) and bool(new_request_hits(ctx.message, NEW_REQUEST))
    return TopicDecision("reset" if hit else "continue", "cue", {})


def predict(session: Session, detect: Detector, window: int = DEFAULT_WINDOW) -> list[bool]:
    """Whether the detector resets at each turn (False for the first)."""
    episode: list[Exchange] = []
    out: list[bool] = []
    last: datetime | None = None
    for n, turn in enumerate(session.turns):
        ctx = TopicContext(
            message=turn.user,
            window=tuple(episode[-window:]),
            summary="",
            now=turn.ts,
            last_activity=last,
            idle_reset_hours=0,
            summary_rounds=0,
            language=session.lang,
        )
        reset = bool(episode) and detect(ctx).reset
        out.append(reset)
        if reset:
            episode = []
        episode.append(Exchange(n + 1, 1, turn.user, turn.assistant, signal=True))
        last = turn.ts
    return out


def evaluate(
    sessions: Sequence[Session], detect: Detector, window: int = DEFAULT_WINDOW
) -> Result:
    tp = fp = fn = side = 0
    misses: list[str] = []
    for session in sessions:
        for n, (turn, reset) in enumerate(
            zip(session.turns, predict(session, detect, window), strict=True)
        ):
            gold = turn.label == "reset"
            tp += gold and reset
            fp += reset and not gold
            fn += gold and not reset
            side += reset and turn.kind in SIDE_KINDS
            if gold != reset:
                misses.append(f"{session.id}#{n} {turn.kind} {'FP' if reset else 'FN'}")
    return Result(tp, fp, fn, side, tuple(misses))


def _line(name: str, r: Result) -> str:
    return (
        f"  {name:<34} precision {r.precision:5.2f}  recall {r.recall:5.2f}  "
        f"(tp {r.tp}, fp {r.fp}, fn {r.fn})  resets on side questions {r.side_resets}"
    )


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--quick", action="store_true", help="same run (it is fast)")
    args = parser.parse_args(argv)
    sessions = load(args.data)
    print(f"== topic (labelled support sessions): {len(sessions)} sessions, window {args.window}")
    targets: list[Target] = []
    for split in ("dev", "heldout"):
        part = [s for s in sessions if s.split == split]
        turns = sum(len(s.turns) - 1 for s in part)
        print(f" {split}: {len(part)} sessions, {turns} turns")
        result = evaluate(part, heuristic, args.window)
        print(_line("heuristic (support profile)", result))
        print(_line("baseline: reset on any cue", evaluate(part, cue_only, args.window)))
        if args.verbose:
            for miss in result.misses:
                print("    " + miss)
        if split == "heldout":
            targets += _targets(result)
    return targets


def _targets(r: Result) -> list[Target]:
    return [
        Target(
            "topics",
            "precision, held-out sessions",
            r.precision,
            0.9,
            "high",
            f"{r.precision:.2f}",
        ),
        Target("topics", "recall, held-out sessions", r.recall, 0.6, "high", f"{r.recall:.2f}"),
        Target(
            "topics",
            "resets on side questions, held-out",
            r.side_resets,
            0,
            "low",
            str(r.side_resets),
        ),
    ]


if __name__ == "__main__":
    main()
