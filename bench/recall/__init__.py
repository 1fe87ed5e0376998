"""Recall: does the answer to a question about an early turn reach the request?

    python -m bench.recall [--exchanges N] [--topic off|heuristic] [--quick]

Two long cases (Spanish and English, `--exchanges` each, default 300) from
`bench.data.recall_cases`: details said among the first exchanges, asked about after the last
one as replay probes (dry runs), each in three phrasings (direct, rephrased, paraphrase
sharing few words). The same transcript is replayed twice through `ventana replay`'s
pipeline (product defaults, offline models, scripted replies): recall on, and recall off
(= window + summary). Measured in the same run, per probe: whether the detail's exact
answer is in the request, and the request's prompt tokens, for

- full history: every earlier message (the answer is always there);
- window only: the last `window` exchanges;
- window + summary: ventana with recall off;
- ventana with recall: the product;
- plain BM25, same tokens: the window plus the earlier exchanges a plain BM25 ranks
  best (lowercased words, no stemming, no function words removed), added until the
  request holds as many tokens as ventana's request for that probe.

Topic detection is off by default (`--topic heuristic` shows it): each case is one
continuous conversation, and a false reset would hide the early details by design (recall
searches the current episode only), which measures the topic heuristic, not recall.

Per-turn time with recall on and off is the replay's wall time per real turn (folds
included, drained each turn). Targets: ≥ 80 % answer in request, ≤ 12 % of full-history
tokens, never below plain BM25 at the same tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import Target, bench_settings, quiet_logs
from bench.data.recall_cases import Line, case
from bot.ops.replay import Report, run_replay
from memory.tokens import Tokenizer, count_messages, default_tokenizer
from providers.base import Message

ARMS = ("full history", "window only", "window + summary", "ventana with recall",
        "plain BM25, same tokens")  # fmt: skip
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Probe:
    language: str
    phrasing: str
    answer: str
    found: dict[str, bool]
    tokens: dict[str, int]


def write(lines: Sequence[Line], session: str, path: Path) -> None:
    rows = [{"role": x.role, "content": x.content, "session": session}
            | ({"probe": True} if x.probe else {}) for x in lines]  # fmt: skip
    with path.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def bm25_pick(
    exchanges: Sequence[tuple[str, str]], question: str, room: int, tok: Tokenizer
) -> list[tuple[str, str]]:
    """Plain BM25 (k1 1.2, b 0.75) over `exchanges`: the best that fit `room` tokens."""
    docs = [Counter(_WORD.findall(f"{u} {r}".lower())) for u, r in exchanges]
    if not docs:
        return []
    avg = sum(sum(d.values()) for d in docs) / len(docs)
    df = Counter(w for d in docs for w in d)
    terms = set(_WORD.findall(question.lower()))
    scores = []
    for i, d in enumerate(docs):
        length, s = sum(d.values()), 0.0
        for w in terms & d.keys():
            idf = math.log(1 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * d[w] * 2.2 / (d[w] + 1.2 * (0.25 + 0.75 * length / avg))
        scores.append((s, i))
    picked = []
    for s, i in sorted(scores, reverse=True):
        cost = tok.count(exchanges[i][0]) + tok.count(exchanges[i][1]) + 8
        if s <= 0 or cost > room:
            continue
        picked.append(exchanges[i])
        room -= cost
    return picked


def request_text(context: dict[str, object]) -> str:
    messages = context["messages"]
    assert isinstance(messages, list)
    return str(context["system"]) + "\n" + "\n".join(m["content"] for m in messages)


def probes_of(
    lines: Sequence[Line], on: Report, off: Report, session: str, window: int, system: str
) -> list[Probe]:
    tok = default_tokenizer()
    exchanges = [(lines[i].content, lines[i + 1].content) for i in range(0, len(lines), 2)
                 if not lines[i].probe]  # fmt: skip
    asked = [x for x in lines if x.probe]
    on_rows = [(t, c) for t, c in zip(on.turns, on.contexts, strict=True) if t.session == session]
    off_rows = [(t, c) for t, c in zip(off.turns, off.contexts, strict=True)
                if t.session == session]  # fmt: skip
    on_probes = [(t, c) for t, c in on_rows if t.probe]
    off_probes = [(t, c) for t, c in off_rows if t.probe]
    history = [Message(r, x) for u, a in exchanges for r, x in (("user", u), ("assistant", a))]
    out = []
    for line, (t_on, c_on), (t_off, c_off) in zip(asked, on_probes, off_probes, strict=True):
        assert line.detail is not None
        answer = line.detail.answer.lower()
        recent = exchanges[-window:]
        window_msgs = [*history[-2 * window :], Message("user", line.content)]
        window_tokens = count_messages(tok, system, window_msgs)
        room = t_on.prompt_tokens - window_tokens
        picked = bm25_pick(exchanges[:-window], line.content, room, tok)
        bm25_msgs = [Message("user", u) for u, _ in picked] + [Message("x", a) for _, a in picked]
        bm25_text = " ".join(m.content for m in (*bm25_msgs, *window_msgs)).lower()
        window_text = " ".join(f"{u} {a}" for u, a in recent).lower()
        found = {
            ARMS[0]: True,
            ARMS[1]: answer in window_text,
            ARMS[2]: answer in request_text(c_off).lower(),
            ARMS[3]: answer in request_text(c_on).lower(),
            ARMS[4]: answer in bm25_text,
        }
        tokens = {
            ARMS[0]: t_on.full_history_tokens,
            ARMS[1]: window_tokens,
            ARMS[2]: t_off.prompt_tokens,
            ARMS[3]: t_on.prompt_tokens,
            ARMS[4]: count_messages(tok, system, [*bm25_msgs, *window_msgs]),
        }
        out.append(Probe(session, line.phrasing, line.detail.answer, found, tokens))
    return out


async def measure(exchanges: int, topic: str) -> tuple[list[Probe], dict[str, float], int]:
    cases = {lang: case(lang, exchanges) for lang in ("es", "en")}
    with tempfile.TemporaryDirectory(prefix="ventana-recall-") as tmp:
        path = Path(tmp) / "recall.jsonl"
        for lang, lines in cases.items():
            write(lines, lang, path)
        # The whole transcript once first: the per-text caches (token counts, terms) are
        # then as warm for the first timed arm as for the second, which would otherwise
        # find them filled by the first. Then on, off, off, on: the mean of each mode.
        await run_replay(path, bench_settings(Path(tmp) / "unused.db"))
        reports, times = {}, {"on": [], "off": []}
        for mode in ("on", "off", "off", "on"):
            settings = bench_settings(Path(tmp) / "unused.db", recall=mode, topic_detection=topic)
            t0 = time.perf_counter()
            reports[mode] = await run_replay(path, settings)
            real = sum(1 for t in reports[mode].turns if not t.probe)
            times[mode].append((time.perf_counter() - t0) / real)
        per_turn = {mode: sum(each) / len(each) for mode, each in times.items()}
    system = settings.resolved_system_prompt()
    probes = []
    for lang, lines in cases.items():
        probes += probes_of(lines, reports["on"], reports["off"], lang,
                            settings.window_exchanges, system)  # fmt: skip
    return probes, per_turn, sum(1 for t in reports["on"].turns if t.reset and not t.probe)


def report(probes: Sequence[Probe], per_turn: dict[str, float], resets: int) -> list[Target]:
    n = len(probes)
    print(f"== recall: {n} probes about early details, 2 long cases (es, en); "
          f"resets during the replay: {resets}")  # fmt: skip
    print(f"  {'arm':<26}{'answer in request':>19}{'prompt tokens/probe':>22}{'% of full':>11}")
    full = sum(p.tokens[ARMS[0]] for p in probes) / n
    rate, tokens = {}, {}
    for arm in ARMS:
        rate[arm] = sum(p.found[arm] for p in probes) / n
        tokens[arm] = sum(p.tokens[arm] for p in probes) / n
        print(f"  {arm:<26}{rate[arm]:>18.1%}{tokens[arm]:>22,.0f}{tokens[arm] / full:>11.1%}")
    for phrasing in ("direct", "rephrased", "paraphrase"):
        mine = [p for p in probes if p.phrasing == phrasing]
        cells = "   ".join(
            f"{arm}: {sum(p.found[arm] for p in mine) / len(mine):.0%}" for arm in ARMS[2:]
        )
        print(f"  {phrasing:<11} {cells}")
    missed = [f"{p.language}/{p.phrasing}: {p.answer}" for p in probes if not p.found[ARMS[3]]]
    print(f"  missed by ventana: {', '.join(missed) or 'none'}")
    on, off = per_turn["on"] * 1000, per_turn["off"] * 1000
    print(f"  per-turn time (replay, folds included; 2 runs each, warm caches): "
          f"recall on {on:.2f} ms, off {off:.2f} ms")  # fmt: skip
    ours, bm25 = rate[ARMS[3]], rate[ARMS[4]]
    share = tokens[ARMS[3]] / full
    return [
        Target("recall", "answer in request (ventana with recall)", ours, 0.8, "high",
               f"{ours:.1%}"),
        Target("recall", "prompt tokens per probe ÷ full history", share, 0.12, "low",
               f"{share:.1%}"),
        Target("recall", "answer rate − plain BM25 at same tokens", ours - bm25, 0.0, "high",
               f"{(ours - bm25) * 100:+.1f} pts", "0 pts"),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=300)
    parser.add_argument("--topic", choices=("off", "heuristic"), default="off")
    parser.add_argument("--quick", action="store_true", help="120 exchanges per case")
    args = parser.parse_args(argv)
    if args.quick:
        args.exchanges = 120
    quiet_logs()
    return report(*asyncio.run(measure(args.exchanges, args.topic)))
