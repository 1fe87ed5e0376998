"""Operator tools: `ventana replay`, `inspect`, `sessions`, `export`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bot.ops import inspect_view
from bot.ops.chart import ChartError, write_chart
from bot.ops.chart_png import png_support
from bot.ops.replay import Report, TranscriptError, run_replay, write_outputs
from bot.terminal import json_text
from config.logging import configure_logging
from config.settings import Settings, SettingsInvalid, known_names, load_settings
from memory.store import Store
from memory.store.open import open_store, where
from memory.tokens import default_tokenizer

# Flags of `replay` and the settings fields they override.
OVERRIDES = {
    "window": "window_exchanges",
    "fold_batch": "fold_batch",
    "chat_model": "chat_model",
    "summary_model": "summary_model",
    "topic": "topic_detection",
}


CHARTS = (".html", ".htm", ".svg", ".png")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser("replay", help="run a transcript through the pipeline; report tokens")
    replay.add_argument(
        "transcript", type=Path, help="JSON Lines: role, content, ts?, session?, probe?"
    )
    replay.add_argument("--window", type=int, metavar="N", help="raw signal exchanges kept")
    replay.add_argument("--fold-batch", type=int, metavar="K", help="fold when K are pending")
    replay.add_argument("--chat-model", metavar="M", help="provider:model for unscripted turns")
    replay.add_argument("--summary-model", metavar="M", help="provider:model for fold-in")
    replay.add_argument("--topic", type=str.lower, choices=("llm", "heuristic", "off"),
                        help="topic detection")  # fmt: skip
    replay.add_argument("--out", type=Path, metavar="REPORT.json", help="write the report")
    replay.add_argument("--contexts", type=Path, metavar="CONTEXTS.jsonl",
                        help="write every chat request, one line per turn")  # fmt: skip
    replay.add_argument("--chart", type=Path, metavar="FILE", help=".html, .svg or .png chart")
    replay.add_argument("--verbose", action="store_true", help="keep the per-turn log lines")
    replay.set_defaults(runner=cmd_replay)
    inspect = sub.add_parser("inspect", help="episodes, window, summaries, noise of a key")
    inspect.add_argument("key")
    inspect.add_argument("--json", action="store_true", help="stable JSON instead of tables")
    inspect.set_defaults(runner=cmd_inspect, quiet_logs=True)
    sessions = sub.add_parser("sessions", help="every key with activity and counts")
    sessions.add_argument("--json", action="store_true")
    sessions.set_defaults(runner=cmd_sessions, quiet_logs=True)
    export = sub.add_parser("export", help="everything stored for a key, as JSON")
    export.add_argument("key")
    export.set_defaults(runner=cmd_export, quiet_logs=True)


def _err(message: str) -> int:
    print(f"ventana: {message}", file=sys.stderr)
    return 1


# -- replay ---------------------------------------------------------------------------------


async def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    if not args.transcript.is_file():
        return _err(f"no transcript at {args.transcript}")
    if args.chart is not None and args.chart.suffix.lower() not in CHARTS:
        return _err(f"--chart {args.chart}: use a .html, .svg or .png file name")
    problem = _output_problem(args)
    if problem is not None:  # found before the replay runs, not after
        print(f"ventana: {problem}", file=sys.stderr)
        return 2
    overrides = {f: getattr(args, a) for a, f in OVERRIDES.items() if getattr(args, a) is not None}
    try:
        settings = load_settings(**overrides) if overrides else settings
    except SettingsInvalid as exc:
        print(f"ventana: {_by_flag(exc, overrides)}", file=sys.stderr)
        return 2
    if settings.log_level == "info" and not args.verbose:  # per-turn lines would bury it
        configure_logging(settings.log_format, "warning")
    try:
        report = await _replay_with_progress(args.transcript, settings)
    except TranscriptError as exc:
        return _err(f"{args.transcript}: {exc}")
    write_outputs(report, args.out, args.contexts)
    if args.chart is not None:
        try:
            write_chart(report.as_json(), args.chart)
        except ChartError as exc:
            return _err(str(exc))
    _print_summary(report, args)
    return 0


def _by_flag(exc: SettingsInvalid, overrides: dict[str, Any]) -> SettingsInvalid:
    """The problems with each overridden setting named by its flag (`--window`), not by
    the variable the user did not set (the environment was checked before)."""
    names = known_names()
    flags = {names[f]: "--" + a.replace("_", "-") for a, f in OVERRIDES.items() if f in overrides}
    return SettingsInvalid({flags.get(name, name): why for name, why in exc.problems.items()})


def _output_problem(args: argparse.Namespace) -> str | None:
    """Why an output file could not be written (missing folder, no PNG support), or None."""
    for flag in ("out", "contexts", "chart"):
        path: Path | None = getattr(args, flag)
        if path is None:
            continue
        if not path.parent.is_dir():
            return f"--{flag} {path}: the folder {path.parent} does not exist"
        if path.is_dir():
            return f"--{flag} {path}: is a folder; give a file name"
    if args.chart is not None and args.chart.suffix.lower() == ".png":
        try:
            png_support()
        except ChartError as exc:
            return str(exc)
    return None


async def _replay_with_progress(path: Path, settings: Settings) -> Report:
    err = Console(stderr=True)
    columns = (TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("turns", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return await run_replay(path, settings, progress=advance)


def _print_summary(report: Report, args: argparse.Namespace) -> None:
    console = Console()
    table = Table(title=f"replay of {args.transcript.name} ({report.tokenizer})")
    for col in ("session", "turns", "prompt tokens", "full history", "ratio", "folds",
                "resets", "reverted"):  # fmt: skip
        if col == "session":  # a long name wraps rather than being cut
            table.add_column(col, overflow="fold")
        else:
            table.add_column(col, justify="right")
    for name in [*report.sessions(), None]:
        t = report.totals(name)
        label = inspect_view.shown(name) if name is not None else "[b]all[/b]"
        table.add_row(label, str(t["turns"]), f"{t['prompt_tokens']:,}",
                      f"{t['full_history_tokens']:,}",
                      f"{t['ratio']:.3f}" if t["full_history_tokens"] else "-",
                      str(t["fold_calls"]), str(t["resets"]),
                      str(t["resets_reverted"]))  # fmt: skip
    totals = report.totals()
    console.print(table)
    console.print(
        f"fold-in tokens: {totals['fold_input_tokens']:,} in / "
        f"{totals['fold_output_tokens']:,} out"
    )
    for label, path in (("report", args.out), ("contexts", args.contexts), ("chart", args.chart)):
        if path is not None:
            console.print(f"{label}: {path}")


# -- store views ----------------------------------------------------------------------------


@asynccontextmanager
async def _existing_store(settings: Settings) -> AsyncIterator[Store | None]:
    """The store, or None when the database file does not exist (never create one here)."""
    pool, sync = settings.db_pool_size, settings.db_sync
    store = await open_store(settings.db, must_exist=True, pool_size=pool, sync=sync)
    if store is None:
        yield None
        return
    try:
        yield store
    finally:
        await store.close()


async def cmd_inspect(args: argparse.Namespace, settings: Settings) -> int:
    async with _existing_store(settings) as store:
        data = None
        if store is not None:
            from bot.app import build_engine
            from providers.offline import OfflineChatModel

            offline = OfflineChatModel()  # the engine only previews: no model is called
            engine = build_engine(settings, store, offline, offline, tokenizer=default_tokenizer())
            data = await inspect_view.collect(store, engine, args.key, settings)
    if data is None:
        return _err(
            f"unknown session key {args.key!r} in {where(settings.db)} (see `ventana sessions`)"
        )
    if args.json:
        _dump(data)
    else:
        inspect_view.render(data, inspect_view.terminal())
    return 0


async def cmd_sessions(args: argparse.Namespace, settings: Settings) -> int:
    async with _existing_store(settings) as store:
        infos = await store.sessions() if store is not None else []
    rows: list[dict[str, Any]] = [
        {
            "key": i.key,
            "created_at": i.created_at.isoformat(),
            "last_activity": i.last_activity.isoformat() if i.last_activity else None,
            "exchanges": i.exchanges,
            "noise": i.noise,
            "episodes": i.episodes,
            "summary_versions": i.summary_versions,
            "debug": i.debug,
        }
        for i in infos
    ]
    if args.json:
        _dump({"format": inspect_view.FORMAT, "sessions": rows})
        return 0
    table = Table(title=escape(f"sessions in {where(settings.db)}"))
    for col in ("key", "last activity", "exchanges", "noise", "episodes", "summaries", "debug"):
        left = col in ("key", "last activity")
        table.add_column(col, justify="left" if left else "right", overflow="fold")
    for r in rows:
        inspect_view.row(table, r["key"], (r["last_activity"] or "-")[:19], str(r["exchanges"]),
                         str(r["noise"]), str(r["episodes"]), str(r["summary_versions"]),
                         "on" if r["debug"] else "")  # fmt: skip
    inspect_view.terminal().print(table if rows else "no sessions yet")
    return 0


async def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    async with _existing_store(settings) as store:
        data = await inspect_view.export_key(store, args.key) if store is not None else None
    if data is None:
        return _err(
            f"unknown session key {args.key!r} in {where(settings.db)} (see `ventana sessions`)"
        )
    _dump(data)
    return 0


def _dump(data: object) -> None:
    sys.stdout.write(json_text(data, indent=2, default=str) + "\n")
