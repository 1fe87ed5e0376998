"""Recall on public dialogue no rule was written from: TIAGE (PersonaChat) conversations.

    python -m bench.recall.public [--split dev|train] [--per 20] [--limit N] [--quick]

Long conversations joined from TIAGE dialogues (`bench.data.public_dialogues`: 20 a
conversation, one a day, each dialogue twice, once per speaker as the user), probed after
their last exchange about what the user disclosed: the fact in other words ("how many
dogs are mine?"), in the shape of long-conversation QA ("what did i tell you about my
dogs?", "when did i tell you about my dogs?"); and, as such QA asks about both speakers,
about what the other speaker (the assistant's lines) said of themselves ("how many dogs
are yours?", "what did you tell me about your dogs?"), printed apart and pooled. The dev
split is the held-out figure (the ranking was tuned on train-built conversations and on
`bench.recall`); `--split train` shows the tuning set.

The same transcript is replayed through `ventana replay`'s pipeline (product defaults,
offline models, the dialogue's own replies) with recall on and off, and per probe, at
that probe's own tokens, the arms of `bench.recall`: full history, window only, window +
summary (recall off), ventana with recall, and plain BM25 + the window filled to
ventana's request tokens (`bench.recall.bm25_pick`, each picked exchange with its date,
as the recall block dates it, so a "when" probe can be answered from it). Topic detection
is off (`--topic heuristic` shows it): casual chat changes subject every few turns and
each reset would hide the conversation from recall by design.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import Target, bench_settings, quiet_logs
from bench.data.public_dialogues import DATA, KINDS, PER, Conversation, conversations
from bench.recall import ARMS, bm25_pick, request_text
from bot.ops.replay import Report, run_replay
from memory.tokens import count_messages, default_tokenizer
from providers.base import Message


@dataclass(frozen=True, slots=True)
class Result:
    conversation: str
    kind: str
    answer: str
    bot: bool  # about what the other speaker said
    found: dict[str, bool]
    tokens: dict[str, int]


def write(convs: Sequence[Conversation], path: Path) -> None:
    """The transcript: each conversation's exchanges (timed), then its probes."""
    with path.open("w", encoding="utf-8") as fh:
        for conv in convs:
            for user, reply, at in conv.exchanges:
                for role, text in (("user", user), ("assistant", reply)):
                    row = {"role": role, "content": text, "session": conv.name,
                           "ts": at.isoformat()}  # fmt: skip
                    fh.write(json.dumps(row) + "\n")
            for probe in (*conv.probes, *conv.bot_probes):
                row = {"role": "user", "content": probe.question, "session": conv.name,
                       "ts": conv.asked_at.isoformat(), "probe": True}  # fmt: skip
                fh.write(json.dumps(row) + "\n")


async def replay(convs: Sequence[Conversation], topic: str) -> tuple[Report, Report, int, str]:
    """The transcript replayed with recall on and off: (on, off, window, system prompt)."""
    with tempfile.TemporaryDirectory(prefix="ventana-recall-public-") as tmp:
        path = Path(tmp) / "public.jsonl"
        write(convs, path)
        reports = {}
        for mode in ("on", "off"):
            settings = bench_settings(Path(tmp) / "unused.db", recall=mode, topic_detection=topic)
            reports[mode] = await run_replay(path, settings)
    return (reports["on"], reports["off"], settings.window_exchanges,
            settings.resolved_system_prompt())  # fmt: skip


def results_of(
    convs: Sequence[Conversation], on: Report, off: Report, window: int, system: str
) -> list[Result]:
    """Every probe's verdict and tokens in every arm."""
    tok = default_tokenizer()
    out = []
    for conv in convs:
        asked_on = [(t, c) for t, c in zip(on.turns, on.contexts, strict=True)
                    if t.session == conv.name and t.probe]  # fmt: skip
        asked_off = [c for t, c in zip(off.turns, off.contexts, strict=True)
                     if t.session == conv.name and t.probe]  # fmt: skip
        pairs = [(u, a) for u, a, _ in conv.exchanges]
        history = [Message(r, x) for u, a in pairs for r, x in (("user", u), ("assistant", a))]
        probes = (*conv.probes, *conv.bot_probes)
        for n, (probe, (t_on, c_on), c_off) in enumerate(
            zip(probes, asked_on, asked_off, strict=True)
        ):
            answer = probe.answer.lower()
            window_msgs = [*history[-2 * window :], Message("user", probe.question)]
            window_tokens = count_messages(tok, system, window_msgs)
            older = [(f"[{at:%Y-%m-%d %H:%M}] {u}", a) for u, a, at in conv.exchanges[:-window]]
            picked = bm25_pick(older, probe.question, t_on.prompt_tokens - window_tokens, tok)
            bm25_msgs = [Message("user", f"{u}\n{a}") for u, a in picked] + window_msgs
            found = {
                ARMS[0]: True,
                ARMS[1]: answer in " ".join(m.content for m in window_msgs[:-1]).lower(),
                ARMS[2]: answer in request_text(c_off).lower(),
                ARMS[3]: answer in request_text(c_on).lower(),
                ARMS[4]: answer in " ".join(m.content for m in bm25_msgs).lower(),
            }
            tokens = {
                ARMS[0]: t_on.full_history_tokens,
                ARMS[1]: window_tokens,
                ARMS[2]: off.turns[off.contexts.index(c_off)].prompt_tokens,
                ARMS[3]: t_on.prompt_tokens,
                ARMS[4]: count_messages(tok, system, bm25_msgs),
            }
            bot = n >= len(conv.probes)
            out.append(Result(conv.name, probe.kind, probe.answer, bot, found, tokens))
    return out


def rates(results: Sequence[Result]) -> tuple[dict[str, float], dict[str, float]]:
    """Per arm: the share of probes whose answer reached the request, mean tokens."""
    n = max(len(results), 1)
    found = {arm: sum(r.found[arm] for r in results) / n for arm in ARMS}
    tokens = {arm: sum(r.tokens[arm] for r in results) / n for arm in ARMS}
    return found, tokens


def table(results: Sequence[Result], title: str) -> dict[str, float]:
    found, tokens = rates(results)
    full = tokens[ARMS[0]] or 1.0
    print(f"== {title}")
    print(f"  {'arm':<26}{'answer in request':>19}{'prompt tokens/probe':>22}{'% of full':>11}")
    for arm in ARMS:
        print(f"  {arm:<26}{found[arm]:>18.1%}{tokens[arm]:>22,.0f}{tokens[arm] / full:>11.1%}")
    for kind in KINDS:
        mine = [r for r in results if r.kind == kind]
        if mine:
            cells = "   ".join(f"{arm}: {rates(mine)[0][arm]:.0%}" for arm in ARMS[2:])
            print(f"  {kind:<8} ({len(mine):>3})  {cells}")
    return {"found": found[ARMS[3]], "bm25": found[ARMS[4]], "share": tokens[ARMS[3]] / full}


async def measure(
    split: str, per: int, shuffles: int, limit: int | None, topic: str, data: Path = DATA
) -> tuple[list[Conversation], list[Result]]:
    convs = conversations(split, per=per, shuffles=shuffles, limit=limit, data=data)
    on, off, window, system = await replay(convs, topic)
    return convs, results_of(convs, on, off, window, system)


def targets(figures: dict[str, float], both: dict[str, float] | None = None) -> list[Target]:
    ours, bm25, share = figures["found"], figures["bm25"], figures["share"]
    out = [
        Target("recall pub", "answer in request (ventana, TIAGE dev-built)", ours, 0.85,
               "high", f"{ours:.1%}"),
        Target("recall pub", "answer rate − plain BM25 at same tokens", ours - bm25, 0.0,
               "high", f"{(ours - bm25) * 100:+.1f} pts", "0 pts"),
        Target("recall pub", "prompt tokens per probe ÷ full history", share, 0.10, "low",
               f"{share:.1%}"),
    ]  # fmt: skip
    if both is not None:
        gain = both["found"] - both["bm25"]
        shown = f"{both['found']:.1%}, {gain * 100:+.1f} pts"
        out.append(Target("recall pub", "both speakers: answer rate − plain BM25", gain, 0.0,
                          "high", shown, "0 pts"))  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--split", choices=("dev", "train"), default="dev")
    parser.add_argument("--per", type=int, default=PER, help="dialogues a conversation")
    parser.add_argument("--shuffles", type=int, default=3, help="orders of the dialogues")
    parser.add_argument("--limit", type=int, default=0, help="conversations (0: all)")
    parser.add_argument("--topic", choices=("off", "heuristic"), default="off")
    parser.add_argument("--quick", action="store_true", help="4 conversations")
    args = parser.parse_args(argv)
    limit = args.limit or (4 if args.quick else None)
    quiet_logs()
    if not (DATA / f"anno_{args.split}.json").exists():
        print(f"== recall (public dialogue): TIAGE not found at {DATA}, skipped")
        return []
    convs, results = asyncio.run(measure(args.split, args.per, args.shuffles, limit, args.topic))
    facts = len({(r.conversation, r.answer) for r in results if r.kind == "persona" and not r.bot})
    exchanges = sum(len(c.exchanges) for c in convs)
    title = (f"recall (public dialogue): TIAGE {args.split}, {len(convs)} conversations, "
             f"{exchanges} exchanges, {facts} disclosures × {len(KINDS)} questions")  # fmt: skip
    user = table([r for r in results if not r.bot], title)
    bots = [r for r in results if r.bot]
    if not bots:
        return targets(user)
    told = len({(r.conversation, r.answer) for r in bots if r.kind == "persona"})
    table(bots, f'the other speaker\'s disclosures ({told} × {len(KINDS)}: "where is your home?")')
    return targets(user, table(results, "both speakers, pooled"))


if __name__ == "__main__":
    main()
