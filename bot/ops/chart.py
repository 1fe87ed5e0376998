"""`--chart`: prompt tokens per turn against full history, one panel per session.

`.html` is a self-contained page with inline SVG (no scripts, no network), `.svg` the
bare panels (READMEs can show it); `.png` (`chart_png`) uses matplotlib, from the `chart`
extra. All read only the replay report's JSON form.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Any

from bot.ops.chart_data import (
    FOLD,
    FOLD_MARKS,
    FULL,
    PROMPT,
    RESET,
    ChartError,
    Turns,
    buckets,
    by_session,
)

__all__ = ["ChartError", "by_session", "write_chart"]

WIDTH, HEIGHT = 920, 330
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 44, 48


def write_chart(report: dict[str, Any], path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        path.write_text(html_page(report), encoding="utf-8")
    elif suffix == ".svg":
        path.write_text(svg_document(report), encoding="utf-8")
    elif suffix == ".png":
        from bot.ops.chart_png import write_png  # matplotlib is optional: only here

        write_png(report, path)
    else:
        raise ChartError(f"--chart {path.name}: use a .html, .svg or .png file name")


# -- HTML + SVG -----------------------------------------------------------------------------


def html_page(report: dict[str, Any]) -> str:
    totals, settings = report.get("totals", {}), report.get("settings", {})
    panels = "\n".join(svg_panel(s, t) for s, t in by_session(report.get("turns", [])).items())
    facts = " · ".join(f"{escape(str(k))} {escape(str(v))}" for k, v in settings.items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>ventana replay — prompt tokens per turn</title>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 960px;
  color: #1f2328; }}
h1 {{ font-size: 20px; margin-bottom: 4px; }} .muted {{ color: #656d76; }}
table {{ border-collapse: collapse; margin: 12px 0 20px; }}
td, th {{ padding: 3px 12px 3px 0; text-align: right; }} th {{ text-align: left; }}
figure {{ margin: 0 0 28px; }} svg text {{ font: 12px system-ui, sans-serif; fill: #1f2328; }}
</style></head><body>
<h1>Prompt tokens per turn: ventana vs. full history</h1>
<p class="muted">tokenizer {escape(str(report.get("tokenizer", "?")))} · {facts}</p>
{_totals_table(totals)}
{panels}
</body></html>
"""


def svg_document(report: dict[str, Any]) -> str:
    """The panels stacked in one standalone SVG (for READMEs, which cannot show HTML)."""
    panels = [svg_panel(s, t) for s, t in by_session(report.get("turns", [])).items()]
    body = "".join(
        f'<g transform="translate(0 {i * HEIGHT})">'
        + p.removeprefix("<figure>").removesuffix("</figure>")
        + "</g>"
        for i, p in enumerate(panels)
    )
    height = HEIGHT * max(1, len(panels))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}"><rect width="100%" height="100%" fill="#ffffff"/>'
        f"<style>text {{ font: 12px sans-serif; fill: #1f2328; }}</style>{body}</svg>\n"
    )


def _totals_table(totals: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{escape(k.replace('_', ' '))}</th><td>{_fmt(v)}</td></tr>"
        for k, v in totals.items()
    )
    return f"<table>{rows}</table>"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return f"{value:,}" if isinstance(value, int) else escape(str(value))


def svg_panel(session: str, turns: Turns) -> str:
    """One session: two lines, fold-in ticks on the axis, resets as dashed lines."""
    n = len(turns)
    top = nice_ceiling(max([t["full_history_tokens"] for t in turns] + [1]))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * (i - 1) / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - v / top)

    parts = [_axes(n, top, x, y)]
    for t in turns:
        if t["reset"]:
            xi = x(t["turn"])
            reason = escape(str(t.get("reset_reason") or "reset"))
            parts.append(
                f'<line x1="{xi:.1f}" y1="{TOP}" x2="{xi:.1f}" y2="{TOP + plot_h}" '
                f'stroke="{RESET}" stroke-dasharray="5 4"><title>turn {t["turn"]}: reset '
                f"({reason})</title></line>"
            )
    for key, colour in (("full", FULL), ("prompt", PROMPT)):  # ≤ MAX_POINTS: a line, not ink
        points = " ".join(f"{x(p['turn']):.1f},{y(p[key]):.1f}" for p in buckets(turns))
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
    for p in buckets(turns, FOLD_MARKS):  # hundreds of triangles would be a solid band
        if p["folds"]:
            xi, yb = x(p["turn"]), TOP + plot_h
            span = (
                f"turn {p['turn']}"
                if p["last"] == p["turn"]
                else (f"turns {p['turn']}–{p['last']}")
            )
            parts.append(
                f'<path d="M{xi:.1f},{yb - 9:.1f} l-5,9 h10 z" fill="{FOLD}"><title>{span}: '
                f"{p['folds']} fold-in call(s)</title></path>"
            )
    prompt = sum(t["prompt_tokens"] for t in turns)
    full = sum(t["full_history_tokens"] for t in turns) or 1
    title = (
        f"session {escape(session)} — {n} turns, {prompt:,} vs {full:,} tokens "
        f"(ratio {prompt / full:.3f})"
    )
    return (
        f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{title}">'
        f'<text x="{LEFT}" y="18" font-weight="600">{title}</text>{_legend()}'
        + "".join(parts)
        + "</svg></figure>"
    )


def _axes(n: int, top: int, x: Any, y: Any) -> str:
    plot_bottom = HEIGHT - BOTTOM
    out: list[str] = []
    for i in range(5):
        value = top * i // 4
        yi = y(value)
        out.append(
            f'<line x1="{LEFT}" y1="{yi:.1f}" x2="{WIDTH - RIGHT}" y2="{yi:.1f}" '
            'stroke="#eaeef2"/>'
            f'<text x="{LEFT - 6}" y="{yi + 4:.1f}" text-anchor="end">{value:,}</text>'
        )
    step = max(1, nice_ceiling(max(n, 1) / 10))
    for turn in [1, *range(step, n + 1, step)]:
        out.append(
            f'<text x="{x(turn):.1f}" y="{plot_bottom + 16}" text-anchor="middle">{turn}</text>'
        )
    out.append(
        f'<line x1="{LEFT}" y1="{plot_bottom}" x2="{WIDTH - RIGHT}" y2="{plot_bottom}" '
        'stroke="#57606a"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{plot_bottom}" stroke="#57606a"/>'
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2}" y="{HEIGHT - 8}" '
        'text-anchor="middle">turn</text>'
        f'<text transform="translate(16 {TOP + (HEIGHT - TOP - BOTTOM) / 2}) rotate(-90)" '
        'text-anchor="middle">tokens per request</text>'
    )
    return "".join(out)


def _legend() -> str:
    items = [
        (f'<line x1="0" y1="-4" x2="18" y2="-4" stroke="{PROMPT}" stroke-width="2"/>',
         "ventana prompt"),
        (f'<line x1="0" y1="-4" x2="18" y2="-4" stroke="{FULL}" stroke-width="2"/>',
         "full history"),
        (f'<path d="M9,-9 l-5,9 h10 z" fill="{FOLD}"/>', "fold-in"),
        (f'<line x1="9" y1="-12" x2="9" y2="2" stroke="{RESET}" stroke-dasharray="4 3"/>',
         "reset"),
    ]  # fmt: skip
    out, left = [], WIDTH - RIGHT - 440
    for mark, label in items:
        out.append(
            f'<g transform="translate({left} 36)">{mark}<text x="24" y="0">{label}</text></g>'
        )
        left += 40 + 8 * len(label)
    return "".join(out)


def nice_ceiling(value: float) -> int:
    """The smallest 1, 2, 2.5 or 5 × 10^k at or above `value`."""
    if value <= 1:
        return 1
    power = float(10 ** math.floor(math.log10(value)))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= value:
            return math.ceil(factor * power)
    return math.ceil(10 * power)  # pragma: no cover - the loop always returns
