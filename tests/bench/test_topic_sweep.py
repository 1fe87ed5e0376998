"""`bench.topic_model.sweep`: the shipped head's ranking and its thresholds on a written set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import blind
from bench.topic_model import sweep
from memory.topic.model import load_model

DEV3 = Path(__file__).resolve().parents[2] / "bench" / "data" / "support_dev3" / "sessions.jsonl"


def test_ranking_counts_auc_and_the_best_recall_at_each_precision() -> None:
    """Four resets over six messages, one negative above two of them: AUC 6/8; precision
    0.9 is met by the top two (recall 0.5) and never again, 0.75 precision is not a bar."""
    rows = [(0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, True), (0.1, False)]
    r = sweep.ranking(rows)
    assert (r.rows, r.resets) == (6, 4)
    assert r.auc == pytest.approx(6 / 8)
    assert r.recall_at == {0.9: 0.5, 0.95: 0.5, 0.99: 0.5}


def test_tied_probabilities_go_in_together_and_count_half_in_the_auc() -> None:
    """A reset and a continue at the same probability: the AUC counts the pair half, and
    no threshold takes the reset without the continue (precision 0.5 at best)."""
    r = sweep.ranking([(0.5, True), (0.5, False)])
    assert r.auc == pytest.approx(0.5)
    assert r.recall_at == {0.9: 0.0, 0.95: 0.0, 0.99: 0.0}


def test_the_blind_folder_and_an_empty_one_are_refused(tmp_path: Path) -> None:
    """The blind set is `bench.blind`'s alone; a folder with nothing to score says so."""
    with pytest.raises(SystemExit, match=r"bench\.blind"):
        sweep.sets_of(blind.DEFAULT_DATA)
    with pytest.raises(SystemExit, match=r"no sessions\.jsonl"):
        sweep.sets_of(tmp_path)


def test_thresholds_that_are_not_numbers_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A bad `--thresholds` exits 2 with argparse's message naming the option."""
    with pytest.raises(SystemExit) as exit_:
        sweep.main(["--data", str(DEV3.parent), "--thresholds", "0.3,high"])
    assert exit_.value.code == 2
    assert "--thresholds: numbers separated by commas" in capsys.readouterr().err


def test_main_scores_a_written_set_with_the_shipped_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three sessions of support_dev3 in a folder of their own: the ranking line and one
    line per threshold, the shipped one marked; a threshold over 1 makes no reset, one of
    0 finds at least the shipped one's resets and resets on continues too (what is left
    out there the detector decides before the model)."""
    lines = DEV3.read_text(encoding="utf-8").splitlines()[:3]
    (tmp_path / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shipped = load_model("support").threshold
    out = sweep.main(["--data", str(tmp_path), "--thresholds", f"0,{shipped},1.01"])
    printed = capsys.readouterr().out
    ranking = out["sessions"]
    assert ranking.resets > 0
    assert 0.5 < ranking.auc <= 1.0
    assert "ranking (gold episodes): AUC" in printed
    assert f"≥ {shipped:<5} (shipped) made" in printed
    assert "≥ 1.01  made P 0.00 R 0.00 (tp 0, fp 0)" in printed
    made = {
        line.split()[1]: tuple(map(int, m.groups()))
        for line in printed.splitlines()
        if (m := re.search(r"made P [\d.]+ R [\d.]+ \(tp (\d+), fp (\d+)\)", line))
    }
    assert made["0.0"][0] >= made[str(shipped)][0] > 0
    assert made["0.0"][1] > made[str(shipped)][1]
