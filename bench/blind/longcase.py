"""The long-case arm: each case replayed through `python -m bot replay`, then scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.blind.data import REPO, LongCase
from bench.blind.lossy import LOSSY, LossySummaryServer

# (arm name, --topic, summary model): offline is the product's own extractive summarizer
LONG_ARMS: tuple[tuple[str, str, str], ...] = (
    ("heuristic", "heuristic", "offline"),
    ("off", "off", "offline"),
    ("heuristic+lossy", "heuristic", LOSSY),
)


@dataclass(frozen=True, slots=True)
class LongScore:
    resets: int  # automatic resets in the report
    reverted: int  # of them, marked reverted
    facts_kept: int  # planted facts verbatim in the last request
    facts: int
    noise: int  # turns the pipeline took for noise (a scripted reply it rejected)

    @property
    def standing(self) -> int:
        return max(0, self.resets - self.reverted)


def _reverted(turn: dict[str, Any]) -> bool:
    """A reset undone later: `reset_reverted` true, or carrying its reason."""
    return bool(turn.get("reset_reverted"))


def score_replay(
    report: dict[str, Any], last_context: dict[str, Any], facts: Sequence[str]
) -> LongScore:
    """Count one replay: resets (and reverted ones) in the report, facts in the last request."""
    turns = [t for t in report.get("turns", []) if isinstance(t, dict) and not t.get("probe")]
    resets = sum(bool(t.get("reset")) for t in turns)
    reverted = sum(_reverted(t) for t in turns)
    noise = sum(bool(t.get("noise_reason")) for t in turns)
    messages = last_context.get("messages") or []
    text = "\n".join(
        [str(last_context.get("system") or "")]
        + [str(m.get("content") or "") for m in messages if isinstance(m, dict)]
    )
    kept = sum(fact in text for fact in facts)
    return LongScore(resets, min(reverted, resets), kept, len(facts), noise)


def write_transcript(case: LongCase, path: Path) -> None:
    """The case as a replay transcript: user and assistant lines with their times (the
    assistant line is the scripted reply)."""
    with path.open("w", encoding="utf-8") as out:
        for turn in case.turns:
            out.write(json.dumps(turn, ensure_ascii=False) + "\n")


# A token that carries a hard fact: a digit, an @, a dot or colon inside a word (hosts,
def replay_case(
    case: LongCase,
    topic: str,
    workdir: Path,
    *,
    summary_model: str = "offline",
    openai_base_url: str | None = None,
    timeout: float = 600.0,
    own_language: bool = False,
) -> LongScore:
    """Run `python -m bot replay` on one case with `--topic TOPIC` (and a summary model:
    `offline`, or an `openai:` one at `openai_base_url`) and score it; `own_language`:
    with `VENTANA_LANGUAGE` set to the case's language (an English bot's summary lines,
    key-fact words and prompts), else the product default."""
    stem = workdir / f"{case.id}-{topic}-{summary_model.replace(':', '_')}"
    transcript = stem.with_suffix(".transcript.jsonl")
    report_path = stem.with_suffix(".report.json")
    contexts_path = stem.with_suffix(".contexts.jsonl")
    write_transcript(case, transcript)
    env = {k: v for k, v in os.environ.items() if k != "VENTANA_DB"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.pop("VENTANA_LANGUAGE", None)
    if own_language:
        env["VENTANA_LANGUAGE"] = case.lang
    if openai_base_url:
        env["OPENAI_BASE_URL"] = openai_base_url
        env.pop("OPENAI_API_KEY", None)  # a loopback server wants none
    command = [
        sys.executable,
        "-m",
        "bot",
        "replay",
        str(transcript),
        "--topic",
        topic,
        "--summary-model",
        summary_model,
        "--chat-model",
        "offline",
        "--out",
        str(report_path),
        "--contexts",
        str(contexts_path),
    ]
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )
    what = f"replay --topic {topic} --summary-model {summary_model}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"{what} failed ({done.returncode}): " + " | ".join(tail))
    report = json.loads(report_path.read_text(encoding="utf-8"))
    lines = [
        json.loads(x) for x in contexts_path.read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    real = [c for c in lines if not c.get("probe")]
    if not real:
        raise RuntimeError(f"{what} wrote no chat request")
    return score_replay(report, real[-1], case.facts)


def add(scores: Iterable[LongScore]) -> LongScore:
    total = LongScore(0, 0, 0, 0, 0)
    for s in scores:
        total = LongScore(
            total.resets + s.resets,
            total.reverted + s.reverted,
            total.facts_kept + s.facts_kept,
            total.facts + s.facts,
            total.noise + s.noise,
        )
    return total


def run_long_cases(
    cases: Sequence[LongCase],
    arms: Sequence[tuple[str, str, str]] = LONG_ARMS,
    jobs: int = 2,
    own_language: bool = False,
) -> dict[str, LongScore]:
    """Every case under every arm (`jobs` replays at a time), summed per arm name; each
    in its own language with `own_language` (`replay_case`)."""
    lossy = LossySummaryServer() if any(model == LOSSY for _, _, model in arms) else None
    try:
        with tempfile.TemporaryDirectory(prefix="ventana-blind-") as tmp:
            work = Path(tmp)
            plan = [(arm, case) for arm in arms for case in cases]

            def run(step: tuple[tuple[str, str, str], LongCase]) -> LongScore:
                (_, topic, model), case = step
                if model == LOSSY:
                    assert lossy is not None
                    return replay_case(
                        case,
                        topic,
                        work,
                        summary_model=f"openai:{LOSSY}",
                        openai_base_url=lossy.base_url,
                        own_language=own_language,
                    )
                return replay_case(
                    case, topic, work, summary_model=model, own_language=own_language
                )

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                results = list(pool.map(run, plan))
    finally:
        if lossy is not None:
            lossy.close()
    by_arm: dict[str, list[LongScore]] = {name: [] for name, _, _ in arms}
    for ((name, _, _), _), score in zip(plan, results, strict=True):
        by_arm[name].append(score)
    return {name: add(scores) for name, scores in by_arm.items()}


def long_line(arm: tuple[str, str, str], s: LongScore) -> str:
    _, topic, model = arm
    return (
        f"  --topic {topic:<9} summary {model:<7}  resets {s.resets} (reverted {s.reverted},"
        f" standing {s.standing})  planted facts in the last request {s.facts_kept} of {s.facts}"
        + (f"  noise turns {s.noise}" if s.noise else "")
    )
