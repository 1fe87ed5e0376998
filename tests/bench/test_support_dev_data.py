"""The written support dev data (bench/data/support_dev/) has its shape, and the counts
its README states are the counts in the files."""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "support_dev"
RESET_KINDS = {"closure_new", "return_new", "abrupt", "implicit"}
CONTINUE_KINDS = {
    "followup",
    "update",
    "thanks",
    "side_question",
    "aside",
    "return_same",
    "other_domain",
    "status",
}
ROW = re.compile(r"^\|\s*(start|reset|continue)\s*\|\s*(\w+)\s*\|\s*(\d+)\s*\|\s*$")


def _lines(name: str) -> list[dict[str, Any]]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _ts(text: str) -> datetime:
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def sessions() -> list[dict[str, Any]]:
    return _lines("sessions.jsonl")


@pytest.fixture(scope="module")
def longcases() -> list[dict[str, Any]]:
    return _lines("longcase.jsonl")


def test_sessions_have_their_shape(sessions: list[dict[str, Any]]) -> None:
    assert len(sessions) == 24
    assert Counter(s["lang"] for s in sessions) == {"es": 12, "en": 12}
    assert len({s["id"] for s in sessions}) == len(sessions)
    for s in sessions:
        ex = s["exchanges"]
        assert s["split"] == "dev", s["id"]
        assert 6 <= len(ex) <= 25, s["id"]
        assert (ex[0]["label"], ex[0]["kind"]) == ("start", "opening"), s["id"]
        for e in ex[1:]:
            allowed = RESET_KINDS if e["label"] == "reset" else CONTINUE_KINDS
            assert e["label"] in {"reset", "continue"}, (s["id"], e)
            assert e["kind"] in allowed, (s["id"], e)
        assert all(e["user"].strip() and e["assistant"].strip() for e in ex), s["id"]
        times = [_ts(e["ts"]) for e in ex]
        assert all(a < b for a, b in pairwise(times)), s["id"]
        cases = 1 + sum(e["label"] == "reset" for e in ex)
        assert 1 <= cases <= 5, s["id"]


def test_longcases_have_their_shape_and_facts(longcases: list[dict[str, Any]]) -> None:
    assert sorted(c["lang"] for c in longcases) == ["en"] * 6 + ["es"] * 6
    for c in longcases:
        turns = c["turns"]
        roles = [t["role"] for t in turns]
        assert roles == ["user", "assistant"] * (len(turns) // 2), c["id"]
        users = [t["content"] for t in turns if t["role"] == "user"]
        assert 40 <= len(users) <= 45, c["id"]
        assert 10 <= len(c["facts"]) <= 13, c["id"]
        for fact in c["facts"]:
            assert any(fact in u for u in users), (c["id"], fact)
        times = [_ts(t["ts"]) for t in turns]
        assert all(a < b for a, b in pairwise(times)), c["id"]


def test_readme_counts_match_the_files(
    sessions: list[dict[str, Any]], longcases: list[dict[str, Any]]
) -> None:
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    stated = {(m[1], m[2]): int(m[3]) for line in readme.splitlines() if (m := ROW.match(line))}
    found = Counter((e["label"], e["kind"]) for s in sessions for e in s["exchanges"])
    assert stated == dict(found)
    resets = sum(n for (label, _), n in found.items() if label == "reset")
    distractors = sum(
        n for (label, k), n in found.items() if label == "continue" and k != "followup"
    )
    exchanges = sum(found.values())
    users = sum(t["role"] == "user" for c in longcases for t in c["turns"])
    facts = sum(len(c["facts"]) for c in longcases)
    assert f"Totals: {resets} resets (" in readme
    assert f"{distractors} distractors" in readme
    assert f"24 sessions (12 es, 12 en), {exchanges} exchanges" in readme
    assert f"12 sessions (6 es, 6 en), {users} user turns, {facts} facts" in readme


@pytest.mark.parametrize(
    ("folder", "split"), [("support_dev", "dev"), ("support_train", "written")]
)
def test_the_files_are_built_from_the_sources(folder: str, split: str) -> None:
    """Each written set's JSONL files are exactly what its builder makes of src/*.txt."""
    module = importlib.import_module(f"bench.data.{folder}.build")
    here = DATA.parent / folder
    src = here / "src"
    sessions = module.build_sessions(sorted(src.glob("sessions_*.txt")), split)
    longcases = module.build_longcases(sorted(src.glob("longcase_*.txt")))
    assert sessions == _rows(here / "sessions.jsonl")
    assert longcases == _rows(here / "longcase.jsonl")


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
