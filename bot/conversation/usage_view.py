"""Usage and estimated cost, per key and per model: one pure report, three renderings
(`ventana usage`, its `--json`, and the operator's `/usage` in chat)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from bot.conversation.prices import estimate_cost
from memory.store.usage import UsageTotal

FORMAT = "ventana.usage/1"
UNKNOWN = "unknown"


def _cost(total: UsageTotal) -> Decimal | None:
    return estimate_cost(total.model, total.input_tokens, total.output_tokens, total.cached_tokens)


def _sum(costs: Iterable[Decimal | None]) -> Decimal | None:
    """The sum, or None when any part is unknown: a partial total would read as the bill."""
    total = Decimal(0)
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return total


def _usd(cost: Decimal | None) -> str | None:
    return None if cost is None else f"{cost.quantize(Decimal('0.000001')).normalize():f}"


def _line(total: UsageTotal, cost: Decimal | None) -> dict[str, Any]:
    return {
        "model": total.model,
        "purpose": total.purpose,
        "calls": total.calls,
        "input_tokens": total.input_tokens,
        "cached_tokens": total.cached_tokens,
        "output_tokens": total.output_tokens,
        "cost_usd": _usd(cost),
    }


def build_report(
    totals: Sequence[UsageTotal], *, key: str | None = None, since: datetime | None = None
) -> dict[str, Any]:
    """Per key (each model and purpose, with its cost) and per model over all keys.
    `cost_usd` is a decimal string, or null where the price is unknown."""
    costs = [_cost(t) for t in totals]
    keys: dict[str, list[tuple[UsageTotal, Decimal | None]]] = defaultdict(list)
    models: dict[tuple[str, str], list[tuple[UsageTotal, Decimal | None]]] = defaultdict(list)
    for total, cost in zip(totals, costs, strict=True):
        keys[total.key].append((total, cost))
        models[(total.model, total.purpose)].append((total, cost))
    return {
        "format": FORMAT,
        "key": key,
        "since": since.isoformat() if since else None,
        "keys": [
            {
                "key": name,
                "models": [_line(t, c) for t, c in rows],
                "cost_usd": _usd(_sum(c for _, c in rows)),
            }
            for name, rows in keys.items()
        ],
        "models": [_merged(model, purpose, rows) for (model, purpose), rows in models.items()],
        "cost_usd": _usd(_sum(costs)),
    }


def _merged(
    model: str, purpose: str, rows: list[tuple[UsageTotal, Decimal | None]]
) -> dict[str, Any]:
    return {
        "model": model,
        "purpose": purpose,
        "keys": len(rows),
        "calls": sum(t.calls for t, _ in rows),
        "input_tokens": sum(t.input_tokens for t, _ in rows),
        "cached_tokens": sum(t.cached_tokens for t, _ in rows),
        "output_tokens": sum(t.output_tokens for t, _ in rows),
        "cost_usd": _usd(_sum(c for _, c in rows)),
    }


def cost_text(cost: str | None) -> str:
    return UNKNOWN if cost is None else f"${cost}"


def chat_lines(report: dict[str, Any], language: str) -> str:
    """The short text `/usage` answers with: one line per model and purpose."""
    rows = report["models"]
    if not rows:
        return "Sin uso registrado todavía." if language == "es" else "No usage recorded yet."
    head = "Uso (tokens del proveedor)" if language == "es" else "Usage (provider tokens)"
    lines = [f"{head}:"]
    for r in rows:
        lines.append(
            f"• {r['model']} ({r['purpose']}): {r['calls']} × · in {r['input_tokens']:,}"
            f" (cached {r['cached_tokens']:,}) · out {r['output_tokens']:,}"
            f" · {cost_text(r['cost_usd'])}"
        )
    lines.append(f"Total: {cost_text(report['cost_usd'])}")
    return "\n".join(lines)
