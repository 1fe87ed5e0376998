"""Tokens per call on a long Spanish support transcript: ours vs full history (issue 9).

    python -m bench.tokens [--turns N] [--topic off|heuristic] [--quick]

The transcript (`bench.transcripts`, ≥ 300 user turns, one continuous case) runs through
`app.handler.handle` with the product defaults (window 6, fold batch 4, budget 8000,
summary cap 800, the offline extractive summarizer) and its scripted replies; background
folds are drained after each turn. Prompt tokens are the exact chat request's tokens
(`count_messages` with `app.tokenizer`); full history is system + every earlier message of
the session + the new message. Fold-in calls count their input and output tokens.
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

from bot.inbound import Inbound
from memory.tokens import count_messages
from providers.base import ChatReply, ChatRequest, Message, Usage

from .common import Target, bench_settings, build_app, quiet_logs
from .transcripts import EARLY_FACTS, Turn, long_support

CHECKPOINTS = (10, 50, 100, 200, 300)


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
    prompt: tuple[int, ...]  # per turn
    full: tuple[int, ...]
    fold_in: tuple[int, ...]  # cumulative fold input+output tokens after each turn
    fold_calls: int
    resets: int
    facts_found: tuple[str, ...]
    facts_total: int

    def at(self, turn: int) -> tuple[int, int]:
        return self.prompt[turn - 1], self.full[turn - 1]

    def total_ratio(self, turn: int) -> float:
        ours = sum(self.prompt[:turn]) + self.fold_in[turn - 1]
        return ours / sum(self.full[:turn])

    def flatness(self, start: int = 50) -> float:
        tail = self.prompt[start - 1 :]
        return max(tail) / min(tail) if tail else 0.0


async def run(turns: Sequence[Turn], topic: str = "off") -> Result:
    with tempfile.TemporaryDirectory(prefix="ventana-tokens-") as tmp:
        model = ScriptedReplies()
        settings = bench_settings(Path(tmp) / "tokens.db", topic_detection=topic)
        app = await build_app(settings, model)
        system = settings.resolved_system_prompt()
        key = "console:soporte-largo"
        history: list[Message] = []
        prompt, full, fold_in = [], [], []
        try:
            for n, turn in enumerate(turns, start=1):
                model.reply, sent = turn.reply, len(model.requests)
                await app.handler.handle(Inbound(key, turn.user, f"t{n}", turn.ts, key))
                await app.folds.drain()
                requests = model.requests[sent:]
                prompt.append(
                    sum(count_messages(app.tokenizer, r.system, r.messages) for r in requests)
                )
                message = Message("user", turn.user)
                full.append(count_messages(app.tokenizer, system, [*history, message]))
                fold_in.append(app.folds.input_tokens + app.folds.output_tokens)
                history += [message, Message("assistant", turn.reply)]
            episodes = len(await app.store.episodes(key))
            last = model.requests[-1]
            text = last.system + "\n" + "\n".join(m.content for m in last.messages)
        finally:
            await app.aclose()
    found = tuple(f for f in EARLY_FACTS if f in text)
    return Result(
        tuple(prompt), tuple(full), tuple(fold_in), app.folds.calls, episodes - 1, found,
        len(EARLY_FACTS),
    )  # fmt: skip


def report(result: Result, topic: str, replies: str = "terse") -> list[Target]:
    n = len(result.prompt)
    print(
        f"== tokens: {n}-turn Spanish support transcript, {replies} replies, defaults (window "
        f"6, fold batch 4, budget 8000, offline extractive summarizer), topic {topic}"
    )
    print(f"  {'turn':>5} {'ours':>7} {'full history':>13} {'ratio':>7}")
    for turn in (t for t in CHECKPOINTS if t <= n):
        ours, full = result.at(turn)
        print(f"  {turn:>5} {ours:>7,} {full:>13,} {ours / full:>7.1%}")
    ours_total = sum(result.prompt)
    fold = result.fold_in[-1]
    full_total = sum(result.full)
    print(
        f"  total {n} turns: ours {ours_total:,} + fold-in {fold:,} ({result.fold_calls} calls)"
        f" = {ours_total + fold:,} vs full {full_total:,} -> {result.total_ratio(n):.1%}"
    )
    if n >= 300:
        ours300 = sum(result.prompt[:300]) + result.fold_in[299]
        print(
            f"  total at turn 300 incl. fold-ins: {ours300:,} vs full {sum(result.full[:300]):,}"
            f" -> {result.total_ratio(300):.1%}"
        )
    tail = result.prompt[49:]
    if tail:
        print(
            f"  flatness turns 50-{n}: min {min(tail):,} max {max(tail):,} "
            f"max/min {result.flatness():.2f}"
        )
    print(
        f"  early facts in the last request: {len(result.facts_found)}/{result.facts_total}"
        f"   resets: {result.resets}"
    )
    missing = sorted(set(EARLY_FACTS) - set(result.facts_found))
    if missing:
        print(f"  missing: {', '.join(missing)}")
    if n < 300:
        return []
    r100 = result.at(100)[0] / result.at(100)[1]
    r300 = result.total_ratio(300)
    facts = len(result.facts_found) / result.facts_total
    tag = f" ({replies})"
    return [
        Target("tokens", "prompt ÷ full at turn 100" + tag, r100, 0.10, "low", f"{r100:.1%}"),
        Target("tokens", "total+folds ÷ full, t300" + tag, r300, 0.15, "low", f"{r300:.1%}"),
        Target("tokens", "early facts, t300 request" + tag, facts, 1.0, "high", f"{facts:.0%}"),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=320)
    parser.add_argument("--topic", choices=("off", "heuristic"), default="off")
    parser.add_argument(
        "--replies",
        choices=("terse", "llm", "both"),
        default="both",
        help="terse scripted replies, LLM-length ones, or both (default)",
    )
    parser.add_argument("--quick", action="store_true", help="60 turns")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns = 60
    quiet_logs()
    targets: list[Target] = []
    for style in ("terse", "llm") if args.replies == "both" else (args.replies,):
        result = asyncio.run(run(long_support(args.turns, replies=style), args.topic))
        targets += report(result, args.topic, style)
    return targets


if __name__ == "__main__":
    main()
