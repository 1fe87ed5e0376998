"""Tokens per call on a long Spanish support transcript: ours vs full history (issue 9).

    python -m bench.tokens [--turns N] [--replies llm|terse|both] [--topic off|heuristic]
                           [--quick]

The transcript (`bench.data.transcripts`, ≥ 300 user turns, one continuous case) runs through
`app.handler.handle` with the product defaults (window 6, fold batch 4, budget 8000,
summary cap 800, the offline extractive summarizer) and its scripted replies; background
folds are drained after each turn. Prompt tokens are the exact chat request's tokens
(`count_messages` with `app.tokenizer`); full history, the baseline measured in the same
run, is system + every earlier message of the session + the new message. Fold-in calls
count their input and output tokens.

Two reply styles. The primary one is LLM-length replies (60-150 words, what a support
assistant backed by a model writes); the targets apply to it. Terse replies (~18 words)
are a stress figure: the summary's fixed cost weighs most against a cheap history.

Targets (issue 9): flat after the window fills; ≤ 10 % of full history at turn 100;
total including fold-in calls ≤ 15 % of full history at turn 300; and our own: the early
facts (ids, amounts, dates of the opening turns) are all in the turn-300 request. "Flat"
is measured as the mean prompt of the last 50 turns over the mean of turns 50-100 (the
fold cycle's ripple averages out; full history's own growth is printed next to it).

Topic detection is off by default: the transcript never changes case, so a reset would be
a false positive that hides the facts this benchmark checks (`--topic heuristic` shows it).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from bench.common import Target, bench_settings, build_app, quiet_logs
from bench.data.transcripts import EARLY_FACTS, Turn, long_support
from bot.conversation.inbound import Inbound
from memory.tokens import count_messages
from memory.types import SessionKey
from providers.base import ChatReply, ChatRequest, Message, Usage

CHECKPOINTS = (10, 50, 100, 200, 300)
AT_TURN = 100  # the per-turn target's turn
TOTAL_AT = 300  # the total (with fold-ins) and early-facts targets' turn
FLAT_FROM, FLAT_EARLY_TO, FLAT_LATE = 50, 100, 50  # turns 50-100 vs the last 50
PRIMARY = "llm"
STYLES = {"llm": "LLM-length replies (primary)", "terse": "terse replies (stress figure)"}


class ScriptedReplies:
    """Answers each turn with the transcript's reply; keeps every request."""

    name = "bench-scripted"

    def __init__(self) -> None:
        self.reply = ""
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        return ChatReply(self.reply, "end", Usage(0, 0), self.name)


@dataclass(frozen=True, slots=True)
class Result:
    prompt: tuple[int, ...]  # per turn: tokens of the chat request(s) sent
    full: tuple[int, ...]  # per turn: tokens of the same turn with the full history
    memory: tuple[int, ...]  # per turn: tokens of the summary block (label included)
    fold_in: tuple[int, ...]  # cumulative fold input+output tokens after each turn
    fold_calls: int
    resets: int
    facts_found: tuple[str, ...]  # early facts in the request of turn `facts_turn`
    facts_total: int
    facts_turn: int = 0
    settings: str = ""

    def at(self, turn: int) -> tuple[int, int]:
        return self.prompt[turn - 1], self.full[turn - 1]

    def ratio(self, turn: int) -> float:
        ours, full = self.at(turn)
        return ours / full

    def total(self, turn: int) -> tuple[int, int, int]:
        """(our prompts, fold-in tokens, full history) summed over turns 1..`turn`."""
        return sum(self.prompt[:turn]), self.fold_in[turn - 1], sum(self.full[:turn])

    def total_ratio(self, turn: int) -> float:
        ours, fold, full = self.total(turn)
        return (ours + fold) / full

    def flatness(self, start: int = FLAT_FROM) -> float:
        """Max ÷ min per-turn prompt from `start` on (the fold cycle's ripple included)."""
        tail = self.prompt[start - 1 :]
        return max(tail) / min(tail) if tail else 0.0

    def growth(self, series: Sequence[int]) -> float:
        """Mean of the last `FLAT_LATE` turns ÷ mean of turns FLAT_FROM..FLAT_EARLY_TO."""
        early = series[FLAT_FROM - 1 : FLAT_EARLY_TO]
        late = series[-FLAT_LATE:]
        return fmean(late) / fmean(early) if early and late else 0.0


async def run(turns: Sequence[Turn], topic: str = "off") -> Result:
    with tempfile.TemporaryDirectory(prefix="ventana-tokens-") as tmp:
        model = ScriptedReplies()
        settings = bench_settings(Path(tmp) / "tokens.db", topic_detection=topic)
        app = await build_app(settings, model)
        system = settings.resolved_system_prompt()
        key = "console:soporte-largo"
        facts_turn = min(TOTAL_AT, len(turns))
        history: list[Message] = []
        prompt, full, memory, fold_in = [], [], [], []
        text = ""
        try:
            for n, turn in enumerate(turns, start=1):
                model.reply, sent = turn.reply, len(model.requests)
                await app.handler.handle(
                    Inbound(SessionKey.parse(key), turn.user, f"t{n}", turn.ts, key)
                )
                await app.folds.drain()
                requests = model.requests[sent:]
                count = app.tokenizer.count
                sizes = [count_messages(app.tokenizer, r.system, r.messages) for r in requests]
                prompt.append(sum(sizes))
                memory.append(max((count(r.system) - count(system) for r in requests), default=0))
                message = Message("user", turn.user)
                full.append(count_messages(app.tokenizer, system, [*history, message]))
                fold_in.append(app.folds.input_tokens + app.folds.output_tokens)
                history += [message, Message("assistant", turn.reply)]
                if n == facts_turn and requests:
                    last = requests[-1]
                    text = last.system + "\n" + "\n".join(m.content for m in last.messages)
            episodes = len(await app.store.episodes(key))
        finally:
            await app.aclose()
    return Result(
        tuple(prompt),
        tuple(full),
        tuple(memory),
        tuple(fold_in),
        app.folds.calls,
        episodes - 1,
        tuple(f for f in EARLY_FACTS if f in text),
        len(EARLY_FACTS),
        facts_turn,
        f"window {settings.window_exchanges}, fold batch {settings.fold_batch}, summary cap "
        f"{settings.summary_tokens}, budget {settings.context_tokens}, offline extractive "
        f"summarizer, topic {topic}",
    )


def report(result: Result, topic: str, replies: str = PRIMARY) -> list[Target]:
    """Print the figures, each next to full history from the same run, and the target
    lines. Targets are returned for the primary style only; the stress style's are
    printed for reference."""
    n = len(result.prompt)
    label = STYLES.get(replies, replies)
    print(f"== tokens: {n}-turn Spanish support case, {label}")
    print(f"   defaults: {result.settings or f'topic {topic}'}")
    print(f"  {'turn':>5} {'ours':>7} {'(memory)':>9} {'full history':>13} {'ours ÷ full':>12}")
    for turn in (t for t in CHECKPOINTS if t <= n):
        ours, full = result.at(turn)
        memory = result.memory[turn - 1]
        print(f"  {turn:>5} {ours:>7,} {memory:>9,} {full:>13,} {ours / full:>12.1%}")
    if n >= AT_TURN:
        cycle = range(max(1, AT_TURN - 3), AT_TURN + 1)
        ratios = [result.ratio(t) for t in cycle]
        print(
            f"  turns {cycle[0]}-{cycle[-1]} (one fold cycle: 0-3 exchanges pending): "
            f"{min(ratios):.1%} to {max(ratios):.1%} of full history"
        )
    for upto in sorted({min(TOTAL_AT, n), n}):
        ours, fold, full = result.total(upto)
        print(
            f"  total turns 1-{upto}: ours {ours:,} + fold-in {fold:,} = {ours + fold:,} vs full "
            f"{full:,} -> {result.total_ratio(upto):.1%}"
        )
    print(f"  fold-in calls: {result.fold_calls} ({result.fold_in[-1]:,} tokens in + out)")
    tail = result.prompt[FLAT_FROM - 1 :]
    if n >= FLAT_EARLY_TO + FLAT_LATE:
        full_tail = result.full[FLAT_FROM - 1 :]
        print(
            f"  per turn, turns {FLAT_FROM}-{n}: ours {min(tail):,} to {max(tail):,} (max ÷ min "
            f"{result.flatness():.2f}); full history {min(full_tail):,} to {max(full_tail):,} "
            f"({max(full_tail) / min(full_tail):.2f})"
        )
        print(
            f"  growth, mean of the last {FLAT_LATE} turns ÷ turns {FLAT_FROM}-{FLAT_EARLY_TO}: "
            f"ours {result.growth(result.prompt):.2f}x, full history "
            f"{result.growth(result.full):.2f}x"
        )
    print(
        f"  early facts in the turn-{result.facts_turn} request: "
        f"{len(result.facts_found)}/{result.facts_total}   resets: {result.resets}"
    )
    missing = [f for f in EARLY_FACTS if f not in result.facts_found]
    if missing:
        print(f"  missing: {', '.join(missing)}")
    targets = _targets(result, replies)
    primary = replies == PRIMARY
    for target in targets:
        print("  " + (target.line() if primary else f"(stress, not a target) {target.line()}"))
    return targets if primary else []


def _targets(result: Result, replies: str) -> list[Target]:
    n = len(result.prompt)
    if n < TOTAL_AT:
        return []
    r100 = result.ratio(AT_TURN)
    r300 = result.total_ratio(TOTAL_AT)
    flat = result.growth(result.prompt)
    facts = len(result.facts_found) / result.facts_total
    found = f"{len(result.facts_found)}/{result.facts_total}"
    rows: list[tuple[str, float, float, str, str]] = [
        (f"prompt ÷ full at turn {AT_TURN}", r100, 0.10, "low", f"{r100:.1%}"),
        (f"total+folds ÷ full, t{TOTAL_AT}", r300, 0.15, "low", f"{r300:.1%}"),
        ("flat: last 50 ÷ turns 50-100", flat, 1.5, "low", f"{flat:.2f}x"),
        (f"early facts, t{TOTAL_AT} request", facts, 1.0, "high", found),
    ]
    return [
        Target(
            "tokens",
            f"{name} ({replies})",
            value,
            limit,
            better,
            shown,
            "all" if name.startswith("early facts") else "",
        )
        for name, value, limit, better, shown in rows
    ]


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=320)
    parser.add_argument("--topic", choices=("off", "heuristic"), default="off")
    parser.add_argument(
        "--replies",
        choices=("llm", "terse", "both"),
        default="both",
        help="LLM-length replies (primary, the targets), terse ones (stress), or both",
    )
    parser.add_argument("--quick", action="store_true", help="60 turns")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns = 60
    quiet_logs()
    targets: list[Target] = []
    for style in (PRIMARY, "terse") if args.replies == "both" else (args.replies,):
        result = asyncio.run(run(long_support(args.turns, replies=style), args.topic))
        targets += report(result, args.topic, style)
    return targets


if __name__ == "__main__":
    main()
