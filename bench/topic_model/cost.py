"""CPU per turn of the topic decision: the learned model against the rules, one run.

    python -m bench.topic_model.cost [--data PATH] [--rounds 3] [--quick]

Every scored turn of TIAGE dev and of the labelled support sessions is decided by each arm
(the learned model and the rules, each profile), each arm from cold text caches, in
alternating rounds so drift on a shared machine falls on both; the figure is the p50 of
process CPU time per decision (`time.process_time_ns`), and the difference learned − rules.
Target (issue 28): the learned decision adds ≤ 0.3 ms a turn.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from bench import topic_tiage, topics
from bench.common import Target, percentile
from memory.topic.decide import PROFILES, TopicContext, detect_learned, detect_rules
from memory.types import TopicDecision

ADDED_MS_TARGET = 0.3
ARMS = {
    "learned/support": lambda c: detect_learned(c, "support"),
    "rules/support": lambda c: detect_rules(c, PROFILES["support"]),
    "learned/chat": lambda c: detect_learned(c, "chat"),
    "rules/chat": lambda c: detect_rules(c, PROFILES["chat"]),
}


def contexts(data: Path, quick: bool) -> list[TopicContext]:
    """The contexts the benches build: TIAGE dev turns, then the labelled sessions' turns."""
    dialogs = topic_tiage.load(data, "dev")[: 40 if quick else None]
    out: list[TopicContext] = []
    for dialog in dialogs:
        texts = [t for t, _ in dialog]
        out += [topic_tiage.context(texts[:i], texts[i], 6) for i in range(1, len(texts))]

    def record(ctx: TopicContext) -> TopicDecision:  # the sessions' contexts, as replayed
        out.append(ctx)
        return TopicDecision("continue", "same_case", {})

    for session in topics.load():
        topics.predict(session, record)
    return out


def cpu_ms(ctxs: Sequence[TopicContext], detect: topic_tiage.Detector) -> list[float]:
    topic_tiage.clear_topic_caches()
    out: list[float] = []
    for ctx in ctxs:
        started = time.process_time_ns()
        detect(ctx)
        out.append((time.process_time_ns() - started) / 1e6)
    return out


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(prog="python -m bench.topic_model.cost")
    parser.add_argument("--data", type=Path, default=topic_tiage.DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    ctxs = contexts(args.data, args.quick)
    samples: dict[str, list[float]] = {name: [] for name in ARMS}
    for _ in range(1 if args.quick else args.rounds):
        for name, detect in ARMS.items():
            samples[name] += cpu_ms(ctxs, detect)
    p50 = {name: percentile(s, 50) for name, s in samples.items()}
    rounds = len(samples["rules/chat"]) // len(ctxs)
    print(f"== topic decision CPU per turn (process time), {len(ctxs)} turns × {rounds} rounds")
    for name, value in p50.items():
        print(f"  {name:<16} p50 {value:.3f} ms  p95 {percentile(samples[name], 95):.3f} ms")
    added = max(p50["learned/support"] - p50["rules/support"], 0.0)
    print(f"  learned − rules (support, the default): {added:+.3f} ms a turn")
    return [
        Target(
            "topic",
            "learned decision CPU added per turn, p50",
            added,
            ADDED_MS_TARGET,
            "low",
            f"{added:.3f} ms",
            f"{ADDED_MS_TARGET} ms",
        )
    ]


if __name__ == "__main__":
    for target in main():
        print("  " + target.line())
