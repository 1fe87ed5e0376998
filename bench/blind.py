"""Blind held-out sets: topic switches and long single cases, aggregate figures only.

    python -m bench.blind [--quick] [--data DIR] [--jobs N]

`bench/data/blind/` was written without reading the detector, the fold-in, recall or the
labelled sets (its README says how); it is scored, never read for misses, so this bench
prints no turn, no session and no fact it got wrong: only counts.

- **Topic arms** on `varied.jsonl` and `multicase_es.jsonl` (the `bench.topics` format):
  the product's detector (`bench.topics.heuristic`) and the naive cue baseline
  (`bench.topics.cue_only`), run as the handler would (`bench.topics.predict`); precision
  and recall of resets, and the resets on distractors (side questions, asides, thanks,
  another domain's word, returns to the same case, updates, status reports).
- **Long-case arm** on `longcase.jsonl`: each case, one open case from start to end, is
  replayed through the real CLI (`python -m bot replay`, offline models, the scripted
  assistant replies) with `--topic heuristic` and with `--topic off`. Every automatic
  reset there is false: a reset stands unless the report marks it reverted
  (`reset_reverted`). The last chat request (`--contexts`, last line) is searched for the
  planted facts, verbatim.

Targets (issue 28's, on sets like these): varied precision ≥ 0.9, recall ≥ 0.7, ≤ 1 false
reset per 328 distractors; Spanish multi-case precision and recall ≥ 0.9; long cases 0
standing resets and every planted fact in the last request. A lossy summary model is not
an arm: `replay` offers no such model without a server (see the data's README).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import topics
from bench.common import Target

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "bench" / "data" / "blind"
VARIED = "varied.jsonl"
MULTICASE = "multicase_es.jsonl"
LONGCASE = "longcase.jsonl"

RESET_KINDS = frozenset({"closure_new", "return_new", "abrupt", "implicit"})
DISTRACTOR_KINDS = frozenset(
    {"side_question", "aside", "thanks", "other_domain", "return_same", "update", "status"}
)
CONTINUE_KINDS = DISTRACTOR_KINDS | {"followup"}
DISTRACTOR_SCALE = 328  # issue 28: at most 1 false reset over 328 distractors
LONG_ARMS = ("heuristic", "off")
QUICK_LONG_CASES = 2  # --quick: the first Spanish and the first English case


class BlindDataError(ValueError):
    """A blind data file that is not in the shape the bench scores."""


# ---------------------------------------------------------------- loading and validation


def _rows(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    if not path.exists():
        raise BlindDataError(f"{path}: not found")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BlindDataError(f"{path.name}:{n}: not JSON ({exc.msg})") from exc
        if not isinstance(raw, dict):
            raise BlindDataError(f"{path.name}:{n}: not a JSON object")
        yield n, raw


def _text(where: str, value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BlindDataError(f"{where}: {field} must be a non-empty string")
    return value


def _when(where: str, value: object) -> datetime:
    try:
        return datetime.fromisoformat(_text(where, value, "ts"))
    except ValueError as exc:
        raise BlindDataError(f"{where}: ts {value!r} is not ISO-8601") from exc


def validate_topic_file(path: Path) -> None:
    """Raise BlindDataError unless every line is a session of the topics format with a
    `start` first, then `continue`/`reset` of known kinds, in time order."""
    seen: set[str] = set()
    count = 0
    for n, raw in _rows(path):
        where = f"{path.name}:{n}"
        sid = _text(where, raw.get("id"), "id")
        where = f"{path.name}:{n} ({sid})"
        if sid in seen:
            raise BlindDataError(f"{where}: duplicate id")
        seen.add(sid)
        if raw.get("lang") not in ("es", "en"):
            raise BlindDataError(f"{where}: lang must be 'es' or 'en'")
        if raw.get("split") != "blind":
            raise BlindDataError(f"{where}: split must be 'blind'")
        exchanges = raw.get("exchanges")
        if not isinstance(exchanges, list) or len(exchanges) < 2:
            raise BlindDataError(f"{where}: exchanges must be a list of 2 or more")
        last: datetime | None = None
        for i, ex in enumerate(exchanges):
            at = f"{where} exchange {i}"
            if not isinstance(ex, dict):
                raise BlindDataError(f"{at}: not an object")
            _text(at, ex.get("user"), "user")
            _text(at, ex.get("assistant"), "assistant")
            ts = _when(at, ex.get("ts"))
            if last is not None and ts < last:
                raise BlindDataError(f"{at}: ts goes back in time")
            last = ts
            label, kind = ex.get("label"), ex.get("kind")
            if i == 0:
                if label != "start":
                    raise BlindDataError(f"{at}: the first label must be 'start'")
            elif label == "reset":
                if kind not in RESET_KINDS:
                    raise BlindDataError(f"{at}: reset kind {kind!r} not in {sorted(RESET_KINDS)}")
            elif label == "continue":
                if kind not in CONTINUE_KINDS:
                    raise BlindDataError(
                        f"{at}: continue kind {kind!r} not in {sorted(CONTINUE_KINDS)}"
                    )
            else:
                raise BlindDataError(f"{at}: label {label!r} must be 'continue' or 'reset'")
        count += 1
    if not count:
        raise BlindDataError(f"{path.name}: no sessions")


def load_topic_set(path: Path) -> list[topics.Session]:
    validate_topic_file(path)
    return topics.load(path)


@dataclass(frozen=True, slots=True)
class LongCase:
    id: str
    lang: str
    facts: tuple[str, ...]
    turns: tuple[dict[str, str], ...]  # {"role", "content", "ts"}, user first, alternating

    @property
    def user_turns(self) -> int:
        return sum(t["role"] == "user" for t in self.turns)


def load_long_cases(path: Path) -> list[LongCase]:
    """The long single-case sessions; BlindDataError unless user and assistant alternate
    (an assistant after every user), times are ISO-8601 in order, and every planted fact
    is said verbatim in some user message."""
    cases: list[LongCase] = []
    seen: set[str] = set()
    for n, raw in _rows(path):
        where = f"{path.name}:{n}"
        cid = _text(where, raw.get("id"), "id")
        where = f"{path.name}:{n} ({cid})"
        if cid in seen:
            raise BlindDataError(f"{where}: duplicate id")
        seen.add(cid)
        lang = raw.get("lang")
        if lang not in ("es", "en"):
            raise BlindDataError(f"{where}: lang must be 'es' or 'en'")
        facts, turns = raw.get("facts"), raw.get("turns")
        if not isinstance(facts, list) or not facts:
            raise BlindDataError(f"{where}: facts must be a non-empty list")
        if not isinstance(turns, list) or len(turns) < 2 or len(turns) % 2:
            raise BlindDataError(f"{where}: turns must be user/assistant pairs")
        clean: list[dict[str, str]] = []
        last: datetime | None = None
        for i, turn in enumerate(turns):
            at = f"{where} turn {i}"
            if not isinstance(turn, dict):
                raise BlindDataError(f"{at}: not an object")
            role = "user" if i % 2 == 0 else "assistant"
            if turn.get("role") != role:
                raise BlindDataError(f"{at}: expected role {role!r}, got {turn.get('role')!r}")
            content = _text(at, turn.get("content"), "content")
            ts = _when(at, turn.get("ts"))
            if last is not None and ts < last:
                raise BlindDataError(f"{at}: ts goes back in time")
            last = ts
            clean.append({"role": role, "content": content, "ts": str(turn["ts"])})
        said = [t["content"] for t in clean if t["role"] == "user"]
        for fact in facts:
            text = _text(where, fact, "a fact")
            if not any(text in message for message in said):
                raise BlindDataError(f"{where}: a planted fact is in no user message verbatim")
        if len(set(facts)) != len(facts):
            raise BlindDataError(f"{where}: a planted fact is listed twice")
        cases.append(LongCase(cid, str(lang), tuple(str(f) for f in facts), tuple(clean)))
    if not cases:
        raise BlindDataError(f"{path.name}: no cases")
    return cases


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
) -> TopicScore:
    result = topics.evaluate(sessions, detect, window)
    distractors = distractor_resets = resets = 0
    for session in sessions:
        predicted = topics.predict(session, detect, window)
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


DETECTORS: tuple[tuple[str, topics.Detector], ...] = (
    ("heuristic (product)", topics.heuristic),
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
    return scores


# ---------------------------------------------------------------- long-case arm


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


def replay_case(case: LongCase, topic: str, workdir: Path, timeout: float = 300.0) -> LongScore:
    """Run `python -m bot replay` on one case with `--topic TOPIC` and score it."""
    stem = workdir / f"{case.id}-{topic}"
    transcript = stem.with_suffix(".transcript.jsonl")
    report_path = stem.with_suffix(".report.json")
    contexts_path = stem.with_suffix(".contexts.jsonl")
    write_transcript(case, transcript)
    env = {k: v for k, v in os.environ.items() if k != "VENTANA_DB"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    command = [
        sys.executable,
        "-m",
        "bot",
        "replay",
        str(transcript),
        "--topic",
        topic,
        "--out",
        str(report_path),
        "--contexts",
        str(contexts_path),
    ]
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(
            f"replay --topic {topic} failed ({done.returncode}): " + " | ".join(tail)
        )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    lines = [
        json.loads(x) for x in contexts_path.read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    real = [c for c in lines if not c.get("probe")]
    if not real:
        raise RuntimeError(f"replay --topic {topic} wrote no chat request")
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
    cases: Sequence[LongCase], arms: Sequence[str] = LONG_ARMS, jobs: int = 2
) -> dict[str, LongScore]:
    """Every case under every arm (`jobs` replays at a time), summed per arm."""
    with tempfile.TemporaryDirectory(prefix="ventana-blind-") as tmp:
        work = Path(tmp)
        plan = [(arm, case) for arm in arms for case in cases]

        def run(step: tuple[str, LongCase]) -> LongScore:
            return replay_case(step[1], step[0], work)

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(run, plan))
    by_arm: dict[str, list[LongScore]] = {arm: [] for arm in arms}
    for (arm, _), score in zip(plan, results, strict=True):
        by_arm[arm].append(score)
    return {arm: add(scores) for arm, scores in by_arm.items()}


def _long_line(arm: str, s: LongScore) -> str:
    return (
        f"  --topic {arm:<10} resets {s.resets} (reverted {s.reverted}, standing {s.standing})"
        f"  planted facts in the last request {s.facts_kept} of {s.facts}"
        + (f"  noise turns {s.noise}" if s.noise else "")
    )


# ---------------------------------------------------------------- targets and main


def targets_for(
    varied: TopicScore | None, multicase: TopicScore | None, long: LongScore | None
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
    return out


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the blind set's folder")
    parser.add_argument("--window", type=int, default=topics.DEFAULT_WINDOW)
    parser.add_argument("--jobs", type=int, default=2, help="replays run at a time")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"topic arms in full (fast); long cases: the first {QUICK_LONG_CASES} only",
    )
    args = parser.parse_args(argv)

    varied = load_topic_set(args.data / VARIED)
    multicase = load_topic_set(args.data / MULTICASE)
    cases = load_long_cases(args.data / LONGCASE)
    print(
        f"== blind held-out sets ({args.data.name}/): aggregate figures only, window {args.window}"
    )
    varied_scores = run_topic_set("varied es/en", varied, args.window)
    multicase_scores = run_topic_set("multi-case es", multicase, args.window)

    if args.quick:
        picked = [next(c for c in cases if c.lang == lang) for lang in ("es", "en")]
        cases = picked[:QUICK_LONG_CASES]
    user_turns = sum(c.user_turns for c in cases)
    facts = sum(len(c.facts) for c in cases)
    print(
        f" long single cases: {len(cases)} cases, {user_turns} user turns, {facts} planted facts"
        " (replay, offline models, scripted replies)"
    )
    long_scores = run_long_cases(cases, LONG_ARMS, args.jobs)
    for arm in LONG_ARMS:
        print(_long_line(arm, long_scores[arm]))
    on, off = long_scores["heuristic"], long_scores["off"]
    print(
        f"  side by side: standing resets {on.standing} vs {off.standing}, "
        f"facts in the last request {on.facts_kept} vs {off.facts_kept} of {on.facts} "
        "(heuristic vs off)"
    )
    print("  lossy summary model: not an arm (replay has no such model without a server)")
    name = DETECTORS[0][0]
    return targets_for(varied_scores[name], multicase_scores[name], on)


if __name__ == "__main__":
    for target in main():
        print("  " + target.line())
