"""`ventana usage [KEY] [--since DATE] [--json]`: provider-reported tokens and estimated cost."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bot.conversation.usage_view import build_report, cost_text
from bot.terminal import json_text, visible
from config.settings import Settings
from memory.store import Store
from memory.store.open import open_store, where


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = sub.add_parser("usage", help="provider-reported tokens and estimated cost")
    usage.add_argument("key", nargs="?", help="one session key (default: every key)")
    usage.add_argument("--since", type=parse_since, metavar="DATE",
                       help="from this date or time on (ISO 8601; UTC by default)")  # fmt: skip
    usage.add_argument("--json", action="store_true", help="stable JSON instead of tables")
    usage.set_defaults(runner=cmd_usage, quiet_logs=True)


def parse_since(text: str) -> datetime:
    """`2026-03-01` or `2026-03-01T12:00[+02:00]`; a time without a zone is UTC."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (use YYYY-MM-DD or an ISO 8601 time)"
        ) from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


async def cmd_usage(args: argparse.Namespace, settings: Settings) -> int:
    totals, known = [], False
    store = await open_store(settings.db, must_exist=True, pool_size=1, sync=settings.db_sync)
    if store is not None:
        try:
            known = args.key is None or await _known(store, args.key, settings)
            totals = await store.usage_totals(args.key, args.since) if known else []
        finally:
            await store.close()
    if args.key is not None and not known:  # as inspect, export, forget: a typo is an error
        print(f"ventana: unknown session key {args.key!r} in {where(settings.db)}"
              " (see `ventana sessions`)", file=sys.stderr)  # fmt: skip
        return 1
    report = build_report(totals, key=args.key, since=args.since)
    if args.json:
        sys.stdout.write(json_text(report, indent=2) + "\n")
    else:
        render(report, Console())
    return 0


async def _known(store: Store, key: str, settings: Settings) -> bool:
    """Whether `key` has a session (with or without usage yet): what `inspect` asks."""
    return await store.peek_state(key, settings.window_exchanges) is not None


def render(report: dict[str, Any], console: Console) -> None:
    if not report["keys"]:
        which = f" for {escape(visible(report['key']))}" if report["key"] else ""
        console.print(f"no usage recorded{which}")
        return
    table = Table(title="usage per key and model (provider-reported tokens)")
    for col in ("key", "model", "purpose", "calls", "input", "cached", "output", "cost"):
        left = col in ("key", "model", "purpose")
        table.add_column(col, justify="left" if left else "right", no_wrap=left)
    for entry in report["keys"]:
        for m in entry["models"]:
            table.add_row(escape(visible(entry["key"])), *_cells(m))
    console.print(table)
    models = Table(title="per model, all keys")
    for col in ("model", "purpose", "keys", "calls", "input", "cached", "output", "cost"):
        left = col in ("model", "purpose")
        models.add_column(col, justify="left" if left else "right", no_wrap=left)
    for m in report["models"]:
        cells = _cells(m)
        models.add_row(cells[0], cells[1], str(m["keys"]), *cells[2:])
    console.print(models)
    console.print(f"estimated total: {cost_text(report['cost_usd'])} (USD, genai-prices)")


def _cells(m: dict[str, Any]) -> list[str]:
    return [
        escape(visible(m["model"])),
        m["purpose"],
        f"{m['calls']:,}",
        f"{m['input_tokens']:,}",
        f"{m['cached_tokens']:,}",
        f"{m['output_tokens']:,}",
        cost_text(m["cost_usd"]),
    ]
