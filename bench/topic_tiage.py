"""Topic-shift benchmark on TIAGE: the learned model and the rules, against always-shift.

    python -m bench.topic_tiage [--split dev|train] [--data PATH] [--window N] [--context MODE]

TIAGE (see ../shared/data/README.md) labels each utterance of PersonaChat dialogues:
-1 on the first turn, 1 where the topic shifts, 0 otherwise. Every utterance but the first
is fed to each arm as the new message: the learned model (`detect_learned`, the product's
`heuristic` mode; fitted on the train split only, so dev is held out) and the
hand-written rules (`detect_rules`, the baseline), each in both profiles, each timed per
turn from cold text caches.

How utterances become a TopicContext:
- The utterance right before the new message is the other speaker's answer, so preceding
  utterances are paired from the end: (u[i-2], u[i-1]) is the last exchange, (u[i-4],
  u[i-3]) the one before, and so on; an unpaired oldest utterance becomes an exchange with
  an empty user side. The window keeps the last N exchanges (the product default, 6).
- There is no fold model here, so the summary is empty; no clock, so no idle resets.
- `--context episode` (default) behaves like the product: after a predicted reset the
  episode restarts at that message, so later turns only see what came after it (and the
  turn right after a reset, with one utterance of context, can still reset). `--context
  dialog` gives every turn all preceding utterances, whatever was predicted before.

Scores count label-1 turns as positives over every labelled turn except the first.
The rules' thresholds and the model were fitted on the train split only; report dev.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.common import Target, ms, percentile
from memory.facts import extract as facts
from memory.topic import families, heuristic, support, text
from memory.topic.decide import PROFILES, TopicContext, detect_learned, detect_rules
from memory.types import Exchange, TopicDecision

REPO = Path(__file__).resolve().parent.parent
# `../shared/data/tiage` beside the checkout (or beside the folder of worktrees holding it)
DEFAULT_DATA = next(
    (p / "shared" / "data" / "tiage" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data" / "tiage",
)
DEFAULT_WINDOW = 6
_NOW = datetime(2024, 1, 1, tzinfo=UTC)

Dialog = list[tuple[str, int]]
Detector = Callable[[TopicContext], TopicDecision]


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


def score(gold: Sequence[bool], predicted: Sequence[bool]) -> Scores:
    """Precision, recall and F1 of `predicted` shifts against `gold` (0.0 when undefined)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    tp = sum(g and p for g, p in zip(gold, predicted, strict=True))
    fp = sum(p and not g for g, p in zip(gold, predicted, strict=True))
    fn = sum(g and not p for g, p in zip(gold, predicted, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, tp, fp, fn)


def load(data: Path, split: str) -> list[Dialog]:
    """Dialogues of `anno_<split>.json` as (utterance, label) lists."""
    raw = json.loads((data / f"anno_{split}.json").read_text(encoding="utf-8"))
    return [[(str(text), int(label)) for text, label in turns] for turns in raw.values()]


def pair(utterances: Sequence[str], window: int) -> tuple[Exchange, ...]:
    """Preceding utterances as exchanges, paired from the end; the last `window` kept."""
    exchanges: list[Exchange] = []
    end = len(utterances)
    while end > 0 and len(exchanges) < window:
        user = utterances[end - 2] if end >= 2 else ""
        reply = utterances[end - 1]
        exchanges.append(Exchange(id=end, episode_id=0, user_text=user, reply_text=reply))
        end -= 2
    return tuple(reversed(exchanges))


def context(utterances: Sequence[str], message: str, window: int) -> TopicContext:
    return TopicContext(
        message=message,
        window=pair(utterances, window),
        summary="",
        now=_NOW,
        last_activity=None,
        idle_reset_hours=0,
        summary_rounds=0,
        language="en",
    )


def learned_chat(ctx: TopicContext) -> TopicDecision:
    return detect_learned(ctx, "chat")


def rules_chat(ctx: TopicContext) -> TopicDecision:
    return detect_rules(ctx, PROFILES["chat"])


def predict(dialog: Dialog, window: int, mode: str, detect: Detector = learned_chat) -> list[bool]:
    """A shift prediction for every utterance after the first."""
    texts = [text for text, _ in dialog]
    start, out = 0, []
    for i in range(1, len(texts)):
        decision = detect(context(texts[start:i], texts[i], window))
        out.append(decision.reset)
        if decision.reset and mode == "episode":
            start = i
    return out


def run(
    dialogs: Sequence[Dialog], window: int, mode: str, detect: Detector = learned_chat
) -> tuple[Scores, Scores]:
    """(detector, always-shift baseline) over the same turns."""
    gold: list[bool] = []
    predicted: list[bool] = []
    for dialog in dialogs:
        gold.extend(label == 1 for _, label in dialog[1:])
        predicted.extend(predict(dialog, window, mode, detect))
    return score(gold, predicted), score(gold, [True] * len(gold))


def timed(detect: Detector) -> tuple[Detector, list[float]]:
    """`detect` recording the seconds of each call."""
    seconds: list[float] = []

    def wrapper(ctx: TopicContext) -> TopicDecision:
        started = time.perf_counter()
        decision = detect(ctx)
        seconds.append(time.perf_counter() - started)
        return decision

    return wrapper, seconds


def clear_topic_caches() -> None:
    """Empty the per-text caches of the topic readings, so each arm starts as cold as the
    first did (arms share them: the second would otherwise find every message read)."""
    for module in (text, families, support, heuristic, facts):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


ARMS: tuple[tuple[str, Detector], ...] = (
    ("learned/chat", learned_chat),
    ("rules/chat", rules_chat),
    ("learned/support", lambda c: detect_learned(c, "support")),
    ("rules/support", lambda c: detect_rules(c, PROFILES["support"])),
)


def _line(name: str, s: Scores) -> str:
    counts = f"tp={s.tp} fp={s.fp} fn={s.fn}"
    return f"  {name:<16} P={s.precision:.3f} R={s.recall:.3f} F1={s.f1:.3f}  ({counts})"


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "train"), default="dev")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--context", choices=("episode", "dialog"), default="episode")
    parser.add_argument("--quick", action="store_true", help="same run (it is fast)")
    args = parser.parse_args(argv)
    dialogs = load(args.data, args.split)
    turns = sum(len(d) - 1 for d in dialogs)
    fitted = (
        "the model's training split: not a held-out figure"
        if args.split == "train"
        else ("held out: the model was fitted on train only")
    )
    print(
        f"== topic (TIAGE {args.split}): {len(dialogs)} dialogues, {turns} scored turns, "
        f"context={args.context}, window={args.window}; {fitted}"
    )
    results: dict[str, Scores] = {}
    baseline = score([], [])
    for name, detect in ARMS:
        clear_topic_caches()
        clocked, seconds = timed(detect)
        results[name], baseline = run(dialogs, args.window, args.context, clocked)
        cost = f"  per turn p50 {ms(percentile(seconds, 50))}, p95 {ms(percentile(seconds, 95))}"
        print(_line(name, results[name]) + cost)
    print(_line("always-shift", baseline))
    print(
        "  learned (memory/topic/models): chat gradient-boosted trees, support a logistic "
        "regression; thresholds chosen by CV on TIAGE train + support sessions "
        "(bench.topic_model.data); rules: the baseline arm. chat: the best-F1 threshold; "
        "support: the product default, precision first."
    )
    if args.split != "dev":
        return []
    chat = results["learned/chat"]
    return [
        Target(
            "topic", "TIAGE dev F1, learned chat profile", chat.f1, 0.5, "high", f"{chat.f1:.3f}"
        ),
        Target(
            "topic",
            "TIAGE dev F1 ÷ always-shift",
            chat.f1 / baseline.f1 if baseline.f1 else 0.0,
            1.2,
            "high",
            f"{chat.f1 / baseline.f1 if baseline.f1 else 0.0:.2f}×",
            "1.2×",
        ),
    ]


if __name__ == "__main__":
    main()
