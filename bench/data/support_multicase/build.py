"""Assemble the hand-written conversations in src/sessions_*.txt into sessions.jsonl.

The texts are written by hand in src/; this only turns lines into JSON and gaps into
ISO-8601 UTC timestamps.  python bench/data/support_multicase/build.py

A copy of `bench/data/support_train/build.py` with its long-case part left out: this set
has sessions only (no longcase.jsonl). Session files (src/sessions_*.txt):
    ## w2-es-01 es 2026-06-02T09:14
    CODE GAP || user text || assistant text
GAP is +3m, +2h, +1d, +1d2h30m (after the previous user turn); the first line of a
session uses +0m.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLIT = "written"
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


def build_sessions(paths: list[Path], split: str = SPLIT) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in paths:
        for head, lines in _blocks(path):
            t = datetime.fromisoformat(head[2]).replace(tzinfo=UTC)
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


def main(folder: Path = HERE, split: str = SPLIT) -> None:
    """`folder`'s src/sessions_*.txt into its sessions.jsonl."""
    sessions = build_sessions(sorted((folder / "src").glob("sessions_*.txt")), split)
    (folder / "sessions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sessions), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
