"""The chart of a long replay: aggregated instead of a solid band (PNG and SVG), and the PNG
with the legend and totals the SVG and HTML have."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bot.ops.chart import svg_document, write_chart
from bot.ops.chart_data import FOLD_MARKS, MAX_POINTS, buckets
from bot.ops.chart_png import png_figure, totals_line


def report(turns: int) -> dict[str, Any]:
    """A saw-tooth like a real replay: prompt tokens climb and drop at every fold."""
    rows = [
        {
            "session": "s",
            "turn": n,
            "prompt_tokens": 400 + 50 * (n % 4),
            "full_history_tokens": 60 * n,
            "fold_calls": int(n % 4 == 0),
            "reset": n == turns // 2,
            "reset_reason": "topic",
        }
        for n in range(1, turns + 1)
    ]
    totals = {
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "full_history_tokens": sum(r["full_history_tokens"] for r in rows),
        "ratio": 0.0123,
        "fold_calls": turns // 4,
        "resets": 1,
    }
    return {"tokenizer": "o200k_base", "settings": {}, "turns": rows, "totals": totals}


def test_buckets_keep_short_replays_as_they_are() -> None:
    """Up to MAX_POINTS turns, every turn is its own point."""
    turns = report(50)["turns"]
    points = buckets(turns)
    assert [p["turn"] for p in points] == list(range(1, 51))
    assert [p["prompt"] for p in points] == [t["prompt_tokens"] for t in turns]


def test_buckets_aggregate_long_replays_without_losing_the_range() -> None:
    """2,000 turns become at most MAX_POINTS points that keep min, max, mean and folds."""
    turns = report(2000)["turns"]
    points = buckets(turns)
    assert len(points) <= MAX_POINTS
    assert min(p["prompt_min"] for p in points) == 400
    assert max(p["prompt_max"] for p in points) == 550
    assert sum(p["folds"] for p in points) == 500
    mean = sum(t["prompt_tokens"] for t in turns) / len(turns)
    assert abs(sum(p["prompt"] for p in points) / len(points) - mean) < 1


def test_png_has_legend_totals_and_few_points(tmp_path: Path) -> None:
    """The figure carries the four legend entries and the report's totals; lines are thin."""
    data = report(2000)
    fig = png_figure(data)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["ventana prompt", "full history", "fold-in", "reset"]
    assert fig._suptitle.get_text() == totals_line(data["totals"])
    assert "ratio 0.012" in totals_line(data["totals"])
    assert all(len(line.get_xdata()) <= MAX_POINTS for line in ax.get_lines())
    (marks,) = [line for line in ax.get_lines() if line.get_marker() == "^"]
    assert 0 < len(marks.get_xdata()) <= FOLD_MARKS  # not 500 triangles in a solid band
    assert "2000 turns, 5 turns per point" in ax.get_title()
    write_chart(data, tmp_path / "long.png")
    assert (tmp_path / "long.png").read_bytes()[:4] == b"\x89PNG"


def test_svg_of_a_long_replay_is_aggregated_too() -> None:
    """The SVG's lines and fold-in marks are bounded like the PNG's; the tooltip says the span."""
    svg = svg_document(report(2000))
    assert svg.count("<path d=") <= FOLD_MARKS + 4  # the marks, plus the legend's triangle
    for points in re.findall(r'<polyline points="([^"]*)"', svg):
        assert len(points.split()) <= MAX_POINTS
    assert re.search(r"<title>turns \d+–\d+: \d+ fold-in call\(s\)</title>", svg)
