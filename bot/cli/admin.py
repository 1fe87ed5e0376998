"""`ventana doctor`, `ventana forget KEY`, `ventana resummarize KEY`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from bot.app import App, build_models, open_store
from bot.cli.channel_probe import check_channels, doctor_warnings
from config.settings import Settings
from memory.store.open import exists, where
from providers.probe import ProbeResult, probe


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = sub.add_parser("doctor", help="check settings, database and model specs")
    doctor.add_argument("--live", action="store_true", help="send one tiny request per model")
    doctor.set_defaults(runner=cmd_doctor, quiet_logs=True)
    forget = sub.add_parser("forget", help="erase every row of a session key for real")
    forget.add_argument("key", help="e.g. telegram:12345 or whatsapp:34600111222")
    wait_help = "how long to wait for a reader holding an old snapshot (10)"
    forget.add_argument("--wait", type=float, default=10.0, metavar="SECONDS", help=wait_help)
    forget.set_defaults(runner=cmd_forget, quiet_logs=True)
    resum = sub.add_parser("resummarize", help="rebuild a key's summary from raw exchanges")
    resum.add_argument("key")
    resum.set_defaults(runner=cmd_resummarize, quiet_logs=True)


def _line(ok: bool, what: str, detail: str) -> bool:
    print(f"{'ok ' if ok else 'FAIL'}  {what:<14} {detail}")
    return ok


def _live(label: str, result: ProbeResult) -> bool:
    """One `--live` line: a model probe or a channel check, with how long it took."""
    return _line(result.ok, label, f"{result.latency_s * 1000:.0f} ms {result.detail}")


async def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    good = _line(
        True,
        "settings",
        f"language={settings.language} window="
        f"{settings.window_exchanges} fold_batch={settings.fold_batch}"
        f" budget={settings.context_tokens}",
    )
    good &= await _database(settings)
    try:
        chat, summary = build_models(settings)
    except ValueError as exc:
        return 1 if not _line(False, "models", str(exc)) else 0
    _line(True, "chat model", settings.chat_model)
    _line(True, "summary model", settings.summary_model)
    _line(True, "channels", ", ".join(settings.channels) or "console only")
    doctor_warnings(settings)
    if args.live:
        for label, model in (("chat live", chat), ("summary live", summary)):
            good &= _live(label, await probe(model))
        for check in await check_channels(settings):
            good &= _live(f"{check.channel} live", check)
    return 0 if good else 1


async def _database(settings: Settings) -> bool:
    """The database line. A SQLite file not there yet is reported, not created: on a
    mistyped VENTANA_DB, a new empty database (and its folders) would be left behind and
    reported as fine. `run` and `console` create it; doctor checks that they can."""
    if not await exists(settings.db):
        ok, detail = await asyncio.to_thread(_to_create, Path(settings.db))
        return _line(ok, "database", detail)
    try:
        store = await open_store(settings)
        detail = await store.describe()
        good = _line(await store.ping(), "database", detail)
        await store.close()
    except Exception as exc:
        good = _line(False, "database", f"{where(settings.db)}: {exc}")
    return good


def _to_create(path: Path) -> tuple[bool, str]:
    """Whether the first run can create `path`, and what doctor says of it."""
    folder = path.parent
    nearest = next(p for p in (folder, *folder.parents) if p.exists())
    if not nearest.is_dir() or not os.access(nearest, os.W_OK | os.X_OK):
        return False, f"sqlite {path}: not found, and {nearest} is no folder it can be made in"
    missing = "" if nearest == folder else f", nor its folder {folder}"
    return True, f"sqlite {path}: not found{missing} (it will be created on first run)"


def _unknown_key(key: str, settings: Settings) -> int:
    print(f"ventana: unknown session key {key!r} in {where(settings.db)}"
          " (see `ventana sessions`)", file=sys.stderr)  # fmt: skip
    return 1


async def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    if not await exists(settings.db):  # as inspect: a typo'd VENTANA_DB is no new database
        return _unknown_key(args.key, settings)
    store = await open_store(settings)
    try:
        removed = await store.forget(args.key)
        erased = await store.erased(wait_s=args.wait) if removed else True
    finally:
        await store.close()
    if not removed:
        return _unknown_key(args.key, settings)
    rows = f"{removed} session/inbox rows and everything under them"
    if erased:
        print(f"erased {args.key}: {rows}")
    else:
        print(f"deleted {args.key}: {rows}; the last copies will be wiped when the reader closes")
    return 0


async def cmd_resummarize(args: argparse.Namespace, settings: Settings) -> int:
    if not await exists(settings.db):
        return _unknown_key(args.key, settings)
    app = await App.build(settings)
    try:
        done = await app.folds.rebuild_report(args.key)
    finally:
        await app.aclose()
    version, key = done.version, args.key
    if version is not None:
        print(
            f"{key}: summary v{version.version}, checkpoint #{version.checkpoint},"
            f" prompt {version.prompt_version}, model {version.model}"
        )
        return 0
    if done.cause == "lost_race":  # the bot's own fold kept winning: its summary is fresh
        print(f"{key}: another fold got there first; the summary is now v{done.current}")
        return 0
    why = {
        "unknown_key": "unknown session key (see `ventana sessions`)",
        "nothing_pending": "nothing to summarize: every exchange is still in the window"
        f" (summary v{done.current})",
        "model_failed": f"the summary model failed ({done.detail}); try again later",
        "rejected": f"the summary was rejected by the fact guard ({done.detail})",
    }[done.cause]
    print(f"ventana: {key}: {why}", file=sys.stderr)
    return 1
