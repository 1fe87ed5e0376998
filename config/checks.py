"""Configuration smells that are not errors: pure functions returning warnings to show.

`unknown_variables` catches a typo'd `VENTANA_*` name (a setting silently left at its
default is the classic "why does it not work" report); `offline_behind_channel` catches
a real channel answered by the offline model (a copied example that set only the summary
model). `ventana run` logs both at warning level; `ventana doctor` shows them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from dotenv import dotenv_values

from config.settings import Settings, closest, known_names

# Variables with our prefix that are not settings fields but are read on purpose.
NOT_SETTINGS = frozenset({"VENTANA_CONFIG", "VENTANA_SOAK_KILLS", "VENTANA_CRASH_SEED"})


def names_in_use(dotenv: Path = Path(".env")) -> list[str]:
    """The variable names the program can see: the environment and the `.env` file."""
    from_file = dotenv_values(dotenv) if dotenv.is_file() else {}
    return [*os.environ, *from_file]


def unknown_variables(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """Each `VENTANA_*` name that no setting reads, with the closest known one (or None)."""
    known = {env for env in known_names().values() if env.startswith("VENTANA_")}
    by_suffix = {env.removeprefix("VENTANA_"): env for env in known}  # the prefix always matches
    found = []
    for name in sorted(set(names)):
        upper = name.upper()
        if upper.startswith("VENTANA_") and upper not in NOT_SETTINGS and upper not in known:
            guess = closest(upper.removeprefix("VENTANA_"), sorted(by_suffix))
            found.append((name, by_suffix[guess] if guess else None))
    return found


def describe_unknown(name: str, guess: str | None) -> str:
    hint = f"; did you mean {guess}?" if guess else ""
    return f"{name} is not a ventana setting and is ignored{hint}"


_SHOWN = {"telegram": "Telegram", "whatsapp": "WhatsApp"}


def offline_behind_channel(settings: Settings) -> str | None:
    """A warning when Telegram or WhatsApp would be answered by the offline model."""
    channels = [_SHOWN[name] for name in settings.channels]
    if not channels or settings.chat_spec.provider != "offline":
        return None
    return (
        f"{' and '.join(channels)} will be answered by the offline model (no AI): set "
        "VENTANA_CHAT_MODEL, e.g. anthropic:claude-sonnet-4-6 or openai:gpt-4.1-mini"
    )
