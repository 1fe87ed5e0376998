"""Assemble the hand-written conversations in src/*.txt into the two JSONL files.

The texts are written by hand in src/; this only turns lines into JSON and gaps into
ISO-8601 UTC timestamps.  python -m bench.data.support_train.build

Session files (src/sessions_*.txt):
    ## w-es-01 es 2026-05-04T09:03
    CODE GAP || user text || assistant text
Long-case files (src/longcase_*.txt):
    ## wl-es-01 es 2026-05-04T09:03
    facts: one ;; two ;; three
    GAP || user text || assistant text
GAP is +3m, +2h, +1d, +1d2h30m (after the previous user turn); the first line of a
session uses +0m.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODES = {
    "O": ("start", "opening"),
    "F": ("continue", "followup"),
    "U": ("continue", "update"),
    "T": ("continue", "thanks"),
    "S": ("continue", "side_question"),
    "A": ("continue", "aside"),
    "R": ("continue", "return_same"),
    "D": ("continue", "other_domain"),
    "ST": ("continue", "status"),
    "CN": ("reset", "closure_new"),
    "RN": ("reset", "return_new"),
    "AB": ("reset", "abrupt"),
    "IM": ("reset", "implicit"),
}
GAP = re.compile(r"^\+(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")


def _gap(text: str) -> timedelta:
    m = GAP.match(text)
    if not m or (not any(m.groups()) and text != "+0m"):
        raise ValueError(f"bad gap {text!r}")
    d, h, mi = (int(g or 0) for g in m.groups())
    return timedelta(days=d, hours=h, minutes=mi)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _blocks(path: Path) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or (line.startswith("#") and not line.startswith("## ")):
            continue
        if line.startswith("## "):
            out.append((line[3:].split(), []))
        else:
            out[-1][1].append(line)
    return out


def _start(head: list[str]) -> datetime:
    return datetime.fromisoformat(head[2]).replace(tzinfo=UTC)


def build_sessions(paths: list[Path], split: str = "written") -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in paths:
        for head, lines in _blocks(path):
            t = _start(head)
            exchanges = []
            for line in lines:
                code_gap, user, assistant = (p.strip() for p in line.split("||"))
                code, gap = code_gap.split()
                t = t + _gap(gap)
                label, kind = CODES[code]
                exchanges.append(
                    {
                        "user": user,
                        "assistant": assistant,
                        "ts": _iso(t),
                        "label": label,
                        "kind": kind,
                    }
                )
            rows.append({"id": head[0], "lang": head[1], "split": split, "exchanges": exchanges})
    return rows


def build_longcases(paths: list[Path]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in paths:
        for head, lines in _blocks(path):
            t = _start(head)
            facts = [f.strip() for f in lines[0].removeprefix("facts:").split(";;")]
            turns = []
            for i, line in enumerate(lines[1:]):
                gap, user, assistant = (p.strip() for p in line.split("||"))
                t = t + _gap(gap)
                turns.append({"role": "user", "content": user, "ts": _iso(t)})
                reply = t + timedelta(seconds=40 + (i * 17) % 70)
                turns.append({"role": "assistant", "content": assistant, "ts": _iso(reply)})
                t = reply
            rows.append({"id": head[0], "lang": head[1], "facts": facts, "turns": turns})
    return rows


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def main(folder: Path = HERE, split: str = "written") -> None:
    """`folder`'s src/*.txt into its two JSONL files (support_dev's builder calls this)."""
    src = folder / "src"
    sessions = build_sessions(sorted(src.glob("sessions_*.txt")), split)
    _write(folder / "sessions.jsonl", sessions)
    _write(folder / "longcase.jsonl", build_longcases(sorted(src.glob("longcase_*.txt"))))


if __name__ == "__main__":
    main()
