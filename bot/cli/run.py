"""`ventana run` and `ventana console`."""

from __future__ import annotations

import argparse
import sys

import structlog

from bot.app import App
from bot.channels.console import run_console
from config.checks import offline_behind_channel
from config.logging import configure_logging
from config.settings import Settings

log = structlog.get_logger(__name__)

BANNER = """\
ventana is running in the console: no Telegram or WhatsApp settings were found.
  · Telegram: set TELEGRAM_BOT_TOKEN (from @BotFather) and run again.
  · WhatsApp: set WHATSAPP_ACCESS_TOKEN, WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_APP_SECRET
    and WHATSAPP_VERIFY_TOKEN.
  · A real model: VENTANA_CHAT_MODEL=anthropic:claude-sonnet-4-6 with ANTHROPIC_API_KEY,
    or openai:gpt-4.1-mini with OPENAI_API_KEY (see README).
"""

# `run` without a channel is the console, which needs a terminal: under a supervisor or
# with piped input it would end at once with status 0, a silent restart loop.
NO_CHANNEL = (
    "no channel is configured: set TELEGRAM_BOT_TOKEN for Telegram, or WHATSAPP_ACCESS_TOKEN,"
    " WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_APP_SECRET and WHATSAPP_VERIFY_TOKEN for WhatsApp;"
    " without one, `ventana run` opens the console, which needs a terminal"
    " (`ventana console` also reads piped input)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser(
        "run", help="start every configured channel (none: the console, on a terminal)"
    )
    run.set_defaults(runner=cmd_run)
    console = sub.add_parser("console", help="chat in the terminal through the same handler")
    console.add_argument("--session", default="local", help="session name (default: local)")
    console.add_argument(
        "--debug", action="store_true", help="dry run for this run only: show the request"
    )
    console.set_defaults(runner=cmd_console, quiet_logs=True)


def _quiet_console_logs(settings: Settings) -> None:
    """In a terminal chat, info lines would interleave with the conversation: show only
    warnings unless VENTANA_LOG_LEVEL was set on purpose."""
    if "log_level" not in settings.model_fields_set:
        configure_logging(settings.log_format, "warning")


async def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    app = await App.build(settings)
    try:
        return await run_console(app.handler, settings, args.session, debug=args.debug)
    finally:
        await app.aclose()


async def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    if not settings.channels:
        if not sys.stdin.isatty():
            print(f"ventana: {NO_CHANNEL}", file=sys.stderr)
            return 2
        sys.stdout.write(BANNER + "\n")
        _quiet_console_logs(settings)
        app = await App.build(settings)
        try:
            return await run_console(app.handler, settings, "local")
        finally:
            await app.aclose()
    from bot.channels.run import run_channels

    offline = offline_behind_channel(settings)
    if offline is not None:
        log.warning("offline_chat_model", hint=offline)
    return await run_channels(settings)
