"""`--chart FILE.png`: the same panels drawn with matplotlib (the `chart` extra).

A long replay is aggregated (at most `MAX_POINTS` per line, the range of each bucket
shaded, fold-ins on a coarser grid) so 2,000 turns read as a trend, not a solid band; the
legend and the report's totals are on the figure, as on the SVG and HTML.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path
from typing import Any

from bot.ops import chart_data as data


def png_support() -> Any:
    """matplotlib's pyplot on the file-only backend, or a ChartError saying how to get it."""
    try:
        matplotlib = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        return importlib.import_module("matplotlib.pyplot")
    except ImportError:
        raise data.ChartError(
            "a .png chart needs matplotlib: pip install matplotlib (in a clone: "
            ".venv/bin/pip install -e '.[chart]'), or use a .html or .svg file"
        ) from None


def totals_line(totals: dict[str, Any]) -> str:
    """The report's totals in one line, as the HTML page's table shows them."""
    return (
        f"all sessions: {totals.get('prompt_tokens', 0):,} prompt tokens vs "
        f"{totals.get('full_history_tokens', 0):,} full history "
        f"(ratio {float(totals.get('ratio', 0)):.3f}) · fold-in calls: "
        f"{totals.get('fold_calls', 0):,} · resets: {totals.get('resets', 0):,}"
    )


def write_png(report: dict[str, Any], path: Path) -> None:
    plt = png_support()
    fig = png_figure(report)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def png_figure(report: dict[str, Any]) -> Any:
    """The matplotlib figure: one panel per session, legend and totals, ≤ MAX_POINTS each."""
    plt = png_support()
    lines = importlib.import_module("matplotlib.lines")
    sessions = data.by_session(report.get("turns", []))
    rows = max(1, len(sessions))
    fig, axes = plt.subplots(rows, 1, figsize=(10, 3.4 * rows + 0.6), squeeze=False)
    fig.suptitle(totals_line(report.get("totals", {})), fontsize=10)
    legend = [
        lines.Line2D([], [], color=data.PROMPT, label="ventana prompt"),
        lines.Line2D([], [], color=data.FULL, label="full history"),
        lines.Line2D([], [], color=data.FOLD, marker="^", linestyle="", label="fold-in"),
        lines.Line2D([], [], color=data.RESET, linestyle="--", label="reset"),
    ]
    for ax, (session, turns) in zip(axes[:, 0], sessions.items(), strict=False):
        _png_panel(ax, session, turns)
        ax.legend(handles=legend, loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def _png_panel(ax: Any, session: str, turns: data.Turns) -> None:
    points = data.buckets(turns)
    xs = [p["turn"] for p in points]
    ax.plot(xs, [p["full"] for p in points], color=data.FULL)
    if len(points) < len(turns):  # aggregated: the range of each bucket, lightly
        lows, highs = [p["prompt_min"] for p in points], [p["prompt_max"] for p in points]
        ax.fill_between(xs, lows, highs, color=data.PROMPT, alpha=0.18, linewidth=0)
    ax.plot(xs, [p["prompt"] for p in points], color=data.PROMPT, linewidth=1.6, zorder=3)
    # Fold-ins on a coarser grid, just above the axis: hundreds of markers are a solid band.
    folds = [p["turn"] for p in data.buckets(turns, data.FOLD_MARKS) if p["folds"]]
    ax.plot(folds, [0.03] * len(folds), "^", color=data.FOLD, markersize=5,
            transform=ax.get_xaxis_transform())  # fmt: skip
    for t in turns:
        if t["reset"]:
            ax.axvline(t["turn"], color=data.RESET, linestyle="--", linewidth=1)
    prompt = sum(t["prompt_tokens"] for t in turns)
    full = sum(t["full_history_tokens"] for t in turns) or 1
    per = (
        f", {math.ceil(len(turns) / len(points))} turns per point"
        if len(points) < len(turns)
        else ""
    )
    ax.set_title(
        f"session {session}: {len(turns)} turns{per}, {prompt:,} vs {full:,} tokens "
        f"(ratio {prompt / full:.3f})",
        fontsize=10,
    )
    ax.set_xlabel("turn")
    ax.set_ylabel("tokens per request")
