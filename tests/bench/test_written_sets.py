"""The written support sets (bench/data/support_train/, support_dev/, support_dev3/,
support_dev4/, support_dev5/, support_multicase/) have their shape, the counts their
READMEs state are the counts in the files, and the files are what their builders make
of src/*.txt."""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from bench.blind import main as blind_main
from bench.blind.data import held_ids, in_split

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
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


@dataclass(frozen=True)
class WrittenSet:
    """One set's folder and what its README promises of it."""

    folder: str
    split: str
    sessions_es: int
    sessions_en: int
    longcases_per_language: int  # 0: a set of sessions only, no longcase.jsonl
    max_user_turns: int
    min_cases: int = 1

    @property
    def path(self) -> Path:
        return DATA / self.folder

    def rows(self, name: str) -> list[dict[str, Any]]:
        text = (self.path / name).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]


SETS = [
    WrittenSet("support_train", "written", 24, 24, 4, 48),
    WrittenSet("support_dev", "dev", 12, 12, 6, 45),
    WrittenSet("support_dev3", "dev", 30, 30, 0, 0),
    WrittenSet("support_dev4", "dev", 12, 12, 3, 46),
    WrittenSet("support_dev5", "dev", 8, 8, 4, 44),
    WrittenSet("support_multicase", "written", 24, 16, 0, 0, min_cases=3),
]


@pytest.fixture(params=SETS, ids=lambda s: s.folder)
def written(request: pytest.FixtureRequest) -> WrittenSet:
    return request.param  # type: ignore[no-any-return]


def _ts(text: str) -> datetime:
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_sessions_have_their_shape(written: WrittenSet) -> None:
    """Sessions of each language, unique ids, the set's split, an opening first, known
    labels and kinds, time order, one (or the set's minimum) to five cases."""
    sessions = written.rows("sessions.jsonl")
    es, en = written.sessions_es, written.sessions_en
    assert len(sessions) == es + en
    assert Counter(s["lang"] for s in sessions) == {"es": es, "en": en}
    assert len({s["id"] for s in sessions}) == len(sessions)
    for s in sessions:
        ex = s["exchanges"]
        assert s["split"] == written.split, s["id"]
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
        assert written.min_cases <= cases <= 5, s["id"]


def test_longcases_have_their_shape_and_facts(written: WrittenSet) -> None:
    """Long cases alternate user and assistant, 40 user turns or more, ten to thirteen
    facts each said verbatim by the user, in time order. A set of sessions only has none."""
    if not written.longcases_per_language:
        assert not (written.path / "longcase.jsonl").exists()
        return
    longcases = written.rows("longcase.jsonl")
    n = written.longcases_per_language
    assert sorted(c["lang"] for c in longcases) == ["en"] * n + ["es"] * n
    for c in longcases:
        turns = c["turns"]
        roles = [t["role"] for t in turns]
        assert roles == ["user", "assistant"] * (len(turns) // 2), c["id"]
        users = [t["content"] for t in turns if t["role"] == "user"]
        assert 40 <= len(users) <= written.max_user_turns, c["id"]
        assert 10 <= len(c["facts"]) <= 13, c["id"]
        for fact in c["facts"]:
            assert any(fact in u for u in users), (c["id"], fact)
        times = [_ts(t["ts"]) for t in turns]
        assert all(a < b for a, b in pairwise(times)), c["id"]


def test_readme_counts_match_the_files(written: WrittenSet) -> None:
    """The README's table of labels and kinds, totals and file sizes are the files'."""
    sessions = written.rows("sessions.jsonl")
    longcases = written.rows("longcase.jsonl") if written.longcases_per_language else []
    readme = (written.path / "README.md").read_text(encoding="utf-8")
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
    es, en, c = written.sessions_es, written.sessions_en, written.longcases_per_language
    assert f"Totals: {resets} resets (" in readme
    assert f"{distractors} distractors" in readme
    assert f"{es + en} sessions ({es} es, {en} en), {exchanges} exchanges" in readme
    if c:
        assert f"{2 * c} sessions ({c} es, {c} en), {users} user turns, {facts} facts" in readme


def test_the_files_are_built_from_the_sources(written: WrittenSet) -> None:
    """Each written set's JSONL files are exactly what its builder makes of src/*.txt."""
    module = importlib.import_module(f"bench.data.{written.folder}.build")
    src = written.path / "src"
    sessions = module.build_sessions(sorted(src.glob("sessions_*.txt")), written.split)
    assert sessions == written.rows("sessions.jsonl")
    if written.longcases_per_language:
        longcases = module.build_longcases(sorted(src.glob("longcase_*.txt")))
        assert longcases == written.rows("longcase.jsonl")


@pytest.mark.parametrize("folder", ["support_dev2", "support_dev4", "support_dev5"])
def test_a_split_set_names_a_held_half_of_its_own_ids(folder: str) -> None:
    """`split.json` lists ids of the set's sessions and cases, and leaves a fit half."""
    path = DATA / folder
    held = held_ids(path)
    assert held
    ids = {row["id"] for name in ("sessions.jsonl", "longcase.jsonl") if (path / name).exists()
           for row in WrittenSet(folder, "dev", 0, 0, 0, 0).rows(name)}  # fmt: skip
    assert held < ids
    assert in_split(next(iter(held)), held, "held")
    assert not in_split(next(iter(held)), held, "fit")
    assert all(in_split(i, held, "fit") for i in ids - held)


@pytest.mark.parametrize(
    "argv",
    [
        ["--split", "held"],  # the blind sets are held out whole
        ["--data", str(DATA / "support_dev"), "--split", "fit"],  # not split
    ],
)
def test_blind_refuses_a_half_where_there_is_none(argv: list[str]) -> None:
    """`bench.blind --split` only on a set with `split.json`; refused before any replay."""
    with pytest.raises(SystemExit):
        blind_main(argv)
