"""`ventana` and `python -m bot`: one program, subcommands per DESIGN.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

import structlog

from bot.cli import admin as cli_admin
from bot.cli import run as cli_run
from bot.cli import usage as cli_usage
from config.checks import names_in_use, unknown_variables
from config.logging import configure_logging, pseudonym_secret
from config.settings import Settings, SettingsInvalid, load_settings
from memory.store import StoreUnavailable

Runner = Callable[[argparse.Namespace, Settings], Awaitable[int]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ventana",
        description="A Telegram and WhatsApp bot whose LLM remembers long conversations.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (cli_run, cli_admin, cli_usage):
        module.register(sub)
    try:  # operator tools live in their own module
        from bot.cli import tools as cli_tools
    except ImportError:  # pragma: no cover - only while the module is being written
        pass
    else:
        cli_tools.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except SettingsInvalid as exc:
        print(f"ventana: {exc}", file=sys.stderr)
        return 2
    explicit, app_secret = settings.log_pseudonym_secret, settings.whatsapp_app_secret
    pseudonyms = pseudonym_secret(
        explicit.get_secret_value() if explicit else None,
        app_secret.get_secret_value() if app_secret else None,
    )
    configure_logging(settings.log_format, _log_level(args, settings), pseudonyms)
    warn_unknown_variables()
    runner: Runner = args.runner
    try:
        return asyncio.run(_guarded(runner(args, settings)))
    except KeyboardInterrupt:  # Ctrl-C before the loop could install its handler
        return 130
    except BrokenPipeError:  # `ventana sessions | head`: the reader left; no traceback
        _silence_stdout()
        return 141  # as a process ended by SIGPIPE, the shell's convention


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush at exit does not raise
    again (the recipe of Python's `signal` documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _log_level(args: argparse.Namespace, settings: Settings) -> str:
    """An operator tool (`quiet_logs`) shows its own output: its info lines (migrations
    applied, a fold written, `stopped`) go nowhere unless VENTANA_LOG_LEVEL was set on
    purpose. Warnings and errors always show."""
    quiet = getattr(args, "quiet_logs", False) and "log_level" not in settings.model_fields_set
    return "warning" if quiet else settings.log_level


def _version() -> str:
    try:
        return version("ventana")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree, uninstalled
        return "unknown (not installed)"


def warn_unknown_variables() -> None:
    """A typo'd VENTANA_* name (environment or .env) leaves a setting at its default: say so."""
    log = structlog.get_logger("bot.cli")
    for name, guess in unknown_variables(names_in_use()):
        hint = {"did_you_mean": guess} if guess else {}
        log.warning("unknown_setting", variable=name, **hint)


async def _guarded(work: Awaitable[int]) -> int:
    """Run `work`, turning SIGTERM/SIGINT into a clean cancellation (no traceback)."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        return 0
    except ValueError as exc:  # configuration problems found while building (missing keys)
        print(f"ventana: {exc}", file=sys.stderr)
        return 2
    except StoreUnavailable as exc:  # a corrupt or unusable database: no traceback
        print(f"ventana: {exc}", file=sys.stderr)
        return 1
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
