"""The written long cases of bench/data/support_dev2/ load, have their shape and planted
facts, are what the builder makes of src/*.txt, and match the counts in the README."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from bench.blind.data import load_long_cases
from bench.data.support_dev2.build import build_longcases

FOLDER = Path(__file__).resolve().parents[2] / "bench" / "data" / "support_dev2"
LONGCASES = FOLDER / "longcase.jsonl"


def _rows() -> list[dict[str, object]]:
    text = LONGCASES.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_file_is_built_from_the_sources() -> None:
    """longcase.jsonl is exactly what the builder makes of src/longcase_*.txt."""
    assert build_longcases(sorted((FOLDER / "src").glob("longcase_*.txt"))) == _rows()
    assert not (FOLDER / "sessions.jsonl").exists()


def test_long_cases_load_with_their_facts_said_by_the_user() -> None:
    """Four cases a language, 36-42 user turns, 12-14 facts each said verbatim by the user."""
    cases = load_long_cases(LONGCASES)
    assert Counter(c.lang for c in cases) == Counter({"es": 4, "en": 4})
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.id.startswith(f"dl2-{c.lang}-") for c in cases)
    for c in cases:
        users = [t["content"] for t in c.turns if t["role"] == "user"]
        assert 36 <= len(users) <= 42, c.id
        assert 12 <= len(c.facts) <= 14, c.id
        for fact in c.facts:
            assert any(fact in u for u in users), (c.id, fact)
        times = [datetime.fromisoformat(t["ts"].replace("Z", "+00:00")) for t in c.turns]
        assert all(a < b for a, b in pairwise(times)), c.id


def test_readme_counts_match_the_file() -> None:
    """The README states the file's numbers of cases, user turns and facts."""
    cases = load_long_cases(LONGCASES)
    users = sum(c.user_turns for c in cases)
    facts = sum(len(c.facts) for c in cases)
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert f"8 sessions (4 es, 4 en), {users} user turns, {facts} facts" in readme
