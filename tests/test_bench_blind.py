"""Smoke tests of bench.blind: the blind data's shape, its validation, and one tiny arm
of each kind (seconds). No test prints or asserts which turn a detector gets wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import blind, topics


def test_blind_data_has_its_shape_and_its_counts() -> None:
    """The three files load and validate; enough resets, distractors and planted facts."""
    varied = blind.load_topic_set(blind.DEFAULT_DATA / blind.VARIED)
    multicase = blind.load_topic_set(blind.DEFAULT_DATA / blind.MULTICASE)
    cases = blind.load_long_cases(blind.DEFAULT_DATA / blind.LONGCASE)
    turns = [t for s in varied for t in s.turns]
    assert len(varied) >= 30
    assert {s.lang for s in varied} == {"es", "en"}
    assert sum(t.label == "reset" for t in turns) >= 60
    assert sum(t.kind in blind.DISTRACTOR_KINDS for t in turns) >= 180
    assert len(multicase) >= 12
    assert {s.lang for s in multicase} == {"es"}
    assert all(sum(t.label == "reset" for t in s.turns) >= 1 for s in multicase)
    assert len(cases) == 8
    assert sorted(c.lang for c in cases) == ["en"] * 4 + ["es"] * 4
    assert all(40 <= c.user_turns <= 70 and 10 <= len(c.facts) <= 14 for c in cases)


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _case(**changes: object) -> dict[str, object]:
    case: dict[str, object] = {
        "id": "c1",
        "lang": "en",
        "facts": ["10.0.0.7"],
        "turns": [
            {
                "role": "user",
                "content": "my server 10.0.0.7 is down",
                "ts": "2026-01-01T09:00:00Z",
            },
            {"role": "assistant", "content": "Looking.", "ts": "2026-01-01T09:00:30Z"},
        ],
    }
    case.update(changes)
    return case


def _session(**changes: object) -> dict[str, object]:
    ex = [
        {
            "user": "hi",
            "assistant": "Hello?",
            "ts": "2026-01-01T09:00:00Z",
            "label": "start",
            "kind": "opening",
        },
        {
            "user": "ok",
            "assistant": "Fine.",
            "ts": "2026-01-01T09:01:00Z",
            "label": "continue",
            "kind": "aside",
        },
    ]
    session: dict[str, object] = {"id": "s1", "lang": "en", "split": "blind", "exchanges": ex}
    session.update(changes)
    return session


@pytest.mark.parametrize(
    "row",
    [
        _case(facts=["10.0.0.8"]),  # a fact said nowhere
        _case(turns=[{"role": "assistant", "content": "x", "ts": "2026-01-01T09:00:00Z"}] * 2),
        _case(turns=_case()["turns"][:1]),  # type: ignore[index]
        _case(lang="fr"),
    ],
)
def test_long_case_validation_rejects_bad_shapes(tmp_path: Path, row: dict[str, object]) -> None:
    """A long case with a broken shape is refused when loaded, never scored."""
    with pytest.raises(blind.BlindDataError):
        blind.load_long_cases(_write(tmp_path / "long.jsonl", [row]))


def test_topic_validation_rejects_bad_labels(tmp_path: Path) -> None:
    """A topic session with an unknown label or split is refused when loaded."""
    good = _session()
    assert blind.load_topic_set(_write(tmp_path / "ok.jsonl", [good]))[0].id == "s1"
    bad_label = _session()
    bad_label["exchanges"][1]["label"] = "maybe"  # type: ignore[index]
    bad_kind = _session()
    bad_kind["exchanges"][1]["label"] = "reset"  # type: ignore[index]  # aside is no reset kind
    for row in (bad_label, bad_kind, _session(split="dev")):
        with pytest.raises(blind.BlindDataError):
            blind.load_topic_set(_write(tmp_path / "bad.jsonl", [row]))


def test_topic_arm_scores_in_range() -> None:
    """The product detector over a few blind sessions: counts add up, figures in [0, 1]."""
    sessions = blind.load_topic_set(blind.DEFAULT_DATA / blind.MULTICASE)[:3]
    score = blind.score_topics(sessions, topics.learned)
    r = score.result
    assert r.tp + r.fn == score.resets > 0
    assert 0.0 <= r.precision <= 1.0
    assert 0.0 <= r.recall <= 1.0
    assert 0 <= score.distractor_resets <= score.distractors
    targets = blind.targets_for(score, score, None)
    assert len(targets) == 5
    assert all(isinstance(t.value, float | int) for t in targets)


def test_the_lossy_arm_scores_its_standing_resets_too() -> None:
    """Issue 28 asks for no standing reset with a lossy summary model as well: a wrong
    reset that stands only there is a MISS in the table, not a line above it."""
    offline = blind.LongScore(resets=2, reverted=2, facts_kept=3, facts=3, noise=0)
    lossy = blind.LongScore(resets=2, reverted=1, facts_kept=3, facts=3, noise=0)
    shown = {t.name: t for t in blind.targets_for(None, None, offline, lossy)}
    standing = shown["long cases, lossy summary: standing resets"]
    assert (standing.value, standing.limit, standing.better) == (1, 0, "low")
    assert shown["long cases: standing resets"].value == 0


def test_replay_scoring_counts_reverted_resets_and_facts() -> None:
    """A report's resets, reverts and last-request facts are counted as the table reads them."""
    report = {
        "turns": [
            {"turn": 1, "reset": False},
            {"turn": 2, "reset": True, "reset_reason": "case_closed"},
            {"turn": 3, "reset": False, "reset_reverted": {"reason": "same facts"}},
            {"turn": 4, "reset": True, "reset_reason": "intent_changed"},
            {"turn": 5, "reset": True, "probe": True},
        ]
    }
    context = {"system": "memory: IBAN ES02 0182", "messages": [{"role": "user", "content": "x"}]}
    score = blind.score_replay(report, context, ["ES02 0182", "INC-1"])
    assert (score.resets, score.reverted, score.standing) == (2, 1, 1)
    assert (score.facts_kept, score.facts) == (1, 2)


def test_long_case_arm_runs_the_real_replay(tmp_path: Path) -> None:
    """One short case through `python -m bot replay`: the report and contexts parse and
    the planted fact of the first turn reaches the last request."""
    full = blind.load_long_cases(blind.DEFAULT_DATA / blind.LONGCASE)[0]
    turns = full.turns[:4]
    said = " ".join(t["content"] for t in turns if t["role"] == "user")
    facts = tuple(f for f in full.facts if f in said)
    case = blind.LongCase(full.id, full.lang, facts, turns)
    score = blind.replay_case(case, "off", tmp_path)
    assert score.standing == 0  # detection off: no automatic reset
    assert score.facts == len(facts) > 0
    assert 0 <= score.facts_kept <= score.facts


def test_a_long_case_can_run_in_its_own_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--own-language`: the replay runs with `VENTANA_LANGUAGE` set to the case's, so an
    English case gets the English system prompt; by default every case gets the product's
    (Spanish), whatever the caller's environment says."""
    from config.settings import load_settings

    turns = (
        {"role": "user", "content": "my order 4471-XK never came", "ts": "2026-03-02T10:00:00Z"},
        {"role": "assistant", "content": "Sorry, checking it.", "ts": "2026-03-02T10:00:30Z"},
    )
    case = blind.LongCase("own-en-01", "en", ("4471-XK",), turns)
    monkeypatch.setenv("VENTANA_LANGUAGE", "en")  # the caller's: not the default arm's
    prompts = {}
    for own in (False, True):
        work = tmp_path / str(own)
        work.mkdir()
        score = blind.replay_case(case, "off", work, own_language=own)
        assert score.facts_kept == 1
        (contexts,) = work.glob("*.contexts.jsonl")
        first = json.loads(contexts.read_text(encoding="utf-8").splitlines()[0])
        prompts[own] = str(first["system"])
    english = load_settings(chat_model="offline", language="en").resolved_system_prompt()
    spanish = load_settings(chat_model="offline", language="es").resolved_system_prompt()
    assert prompts[True].startswith(english)
    assert prompts[False].startswith(spanish)


def test_lossy_summary_server_drops_the_facts() -> None:
    """The lossy arm's model: an OpenAI-compatible reply whose text keeps no identifier."""
    import urllib.request

    prompt = "<transcript>ip 185.62.74.219, IBAN ES02 0182 2370, mail a@b.es, 49,90 €</transcript>"
    with blind.LossySummaryServer() as server:
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps({"messages": [{"role": "user", "content": prompt}]}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            body = json.loads(answer.read())
        assert server.calls == 1
    text = body["choices"][0]["message"]["content"]
    assert text.startswith("Resumen")
    assert not any(fact in text for fact in ("185.62.74.219", "ES02", "a@b.es", "49,90"))


def test_a_written_dev_set_loads_with_any_split_and_never_as_blind() -> None:
    """`bench.blind --data bench/data/support_dev` reads the dev sessions (split "dev");
    the same file is refused where a blind set is required."""
    path = topics.REPO / "bench" / "data" / "support_dev" / "sessions.jsonl"
    sessions = blind.load_topic_set(path, None)
    assert len(sessions) == 24
    with pytest.raises(blind.BlindDataError, match="split must be 'blind'"):
        blind.load_topic_set(path)


def test_the_blind_folder_scores_its_two_sets_and_a_written_one_what_it_has() -> None:
    """`make bench` scores the blind folder's varied and multi-case sets (never a sessions
    file it does not hold); a written set's folder gives its own sessions."""
    folder = topics.REPO / "bench" / "data"
    assert [f for _, f in blind.topic_sets(folder / "blind", True)] == [
        blind.VARIED,
        blind.MULTICASE,
    ]
    assert [f for _, f in blind.topic_sets(folder / "support_dev", False)] == ["sessions.jsonl"]


def test_a_written_folder_without_long_cases_scores_its_sessions_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A written set of sessions only (`support_multicase/`) is scored and says it has no
    long cases, instead of failing on the missing file."""
    source = topics.REPO / "bench" / "data" / "support_dev" / "sessions.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:2]
    (tmp_path / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert blind.main(["--data", str(tmp_path)]) == []
    out = capsys.readouterr().out
    assert "2 sessions" in out
    assert f"long single cases: none in {tmp_path.name}/" in out
