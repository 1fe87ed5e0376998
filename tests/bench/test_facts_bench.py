"""`bench.facts`: the planted details a message's key-fact lines keep, and the protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import facts as bench_facts


def _write(folder: Path, rows: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    (folder / "facts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _row(i: int, split: str, text: str, facts: list[str]) -> dict[str, object]:
    return {"id": f"t-{i:03d}", "lang": "es", "split": split, "text": text, "facts": facts}


def test_kept_read_otherwise_missed_and_extra_lines_are_counted(tmp_path: Path) -> None:
    """An order id is kept; "del 14/03" is read as the date, written "el 14/03" (read
    otherwise); a word the extractor has no kind for is missed; a message planted with
    no detail whose key-fact line is an email counts one extra line there."""
    folder = _write(
        tmp_path / "set",
        [
            _row(1, "fit", "el pedido PED-44812 no ha llegado", ["PED-44812"]),
            _row(2, "fit", "del 14/03 si puede ser", ["del 14/03"]),
            _row(3, "fit", "vivo en una casa azul", ["casa azul"]),
            _row(4, "held", "escribidme a ana.lopez@example.com", []),
        ],
    )
    items = bench_facts.load(folder)
    fit = bench_facts.score([i for i in items if i.split == "fit"])
    assert (fit.planted, fit.kept, fit.read_otherwise, fit.missed) == (3, 1, 1, 1)
    assert [how for _, _, how in fit.misses] == ["read otherwise", "missed"]
    held = bench_facts.score([i for i in items if i.split == "held"])
    assert (held.empty_messages, held.extra_on_empty, held.planted) == (1, 1, 0)


def test_a_fact_not_in_its_message_or_a_bad_split_is_refused(tmp_path: Path) -> None:
    """The set's facts are substrings of their messages; the split is fit or held."""
    bad = _write(tmp_path / "a", [_row(1, "fit", "pedido PED-1", ["PED-2"])])
    with pytest.raises(bench_facts.FactsDataError, match="PED-2"):
        bench_facts.load(bad)
    odd = _write(tmp_path / "b", [_row(1, "dev", "pedido PED-1", ["PED-1"])])
    with pytest.raises(bench_facts.FactsDataError, match="split"):
        bench_facts.load(odd)


def test_misses_are_printed_for_the_fit_half_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--misses` without `--split fit` is a usage error; with it, the fit half's misses
    are printed and the held half is not scored at all."""
    folder = _write(
        tmp_path / "set",
        [
            _row(1, "fit", "vivo en una casa azul", ["casa azul"]),
            _row(2, "held", "vivo en una casa verde", ["casa verde"]),
        ],
    )
    with pytest.raises(SystemExit):
        bench_facts.main(["--data", str(folder), "--misses"])
    bench_facts.main(["--data", str(folder), "--split", "fit", "--misses"])
    out = capsys.readouterr().out
    assert "casa azul" in out
    assert "casa verde" not in out
    assert "held" not in out


def test_a_missing_set_says_how_to_build_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No facts.jsonl: one line naming the build command, no traceback, no figures."""
    assert bench_facts.main(["--data", str(tmp_path)]) == []
    assert "bench.data.facts_dev.build" in capsys.readouterr().out


def test_the_written_set_is_what_its_sources_build(tmp_path: Path) -> None:
    """`facts.jsonl` is its hand-written sources built (nobody edited the output), with
    the README's counts: 320 messages, 690 details, fit and held halves of 160 each."""
    from bench.data.facts_dev import build

    rebuilt = tmp_path / "facts.jsonl"
    records = build.build(out_path=rebuilt)
    assert rebuilt.read_bytes() == (bench_facts.DEFAULT_DATA / "facts.jsonl").read_bytes()
    assert len(records) == 320
    assert sum(len(r["facts"]) for r in records) == 690
    assert sum(r["split"] == "fit" for r in records) == 160
    items = bench_facts.load(bench_facts.DEFAULT_DATA)
    assert len(items) == 320


def test_long_cases_are_scored_as_held_messages_without_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of long cases (`bench.blind`'s format) gives one held item per user
    message, with the case's facts it says; `--split fit --misses` then prints none."""
    turns = [
        {
            "role": "user",
            "content": "mi pedido PED-44812 no llega",
            "ts": "2026-03-02T10:00:00+00:00",
        },
        {"role": "assistant", "content": "Lo miro.", "ts": "2026-03-02T10:01:00+00:00"},
        {"role": "user", "content": "vivo en una casa azul", "ts": "2026-03-02T10:02:00+00:00"},
        {"role": "assistant", "content": "Vale.", "ts": "2026-03-02T10:03:00+00:00"},
    ]
    case = {"id": "lc-es-01", "lang": "es", "facts": ["PED-44812", "casa azul"], "turns": turns}
    folder = tmp_path / "long"
    folder.mkdir()
    (folder / "longcase.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    items = bench_facts.load(folder)
    assert [(i.split, i.facts) for i in items] == [
        ("held", ("PED-44812",)),
        ("held", ("casa azul",)),
    ]
    held = bench_facts.score(items)
    assert (held.kept, held.missed) == (1, 1)
    bench_facts.main(["--data", str(folder), "--split", "fit", "--misses"])
    assert "casa azul" not in capsys.readouterr().out


def test_a_split_set_of_long_cases_has_a_fit_and_a_held_half(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """support_dev4's `split.json` makes its `-03` cases held and the others fit: the
    fit half's misses may be printed, the held half's never are."""
    folder = bench_facts.DEFAULT_DATA.parent / "support_dev4"
    items = bench_facts.load(folder)
    halves = {i.id.rsplit("-", 1)[0]: i.split for i in items}
    assert {case for case, split in halves.items() if split == "held"} == {
        "dl4-es-03",
        "dl4-en-03",
    }
    assert {case for case, split in halves.items() if split == "fit"} == {
        "dl4-es-01",
        "dl4-es-02",
        "dl4-en-01",
        "dl4-en-02",
    }
    bench_facts.main(["--data", str(folder), "--split", "fit", "--misses"])
    out = capsys.readouterr().out
    assert any(line.startswith("  fit ") for line in out.splitlines())
    assert not any(line.startswith("  held") for line in out.splitlines())
    assert all("dl4-es-03" not in line and "dl4-en-03" not in line for line in out.splitlines())
