"""What is wrong with the settings, as the user reads it: the error naming every bad
variable, the settings that need another, and the guess at what a mistyped name meant."""

from __future__ import annotations

import difflib
from collections.abc import Mapping


class Missing(ValueError):
    """Variables that other settings need and that are not set, each with its reason."""

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name}: {why}" for name, why in problems.items()))


class SettingsInvalid(Exception):
    """Every invalid variable at once, named as the user wrote it (with its value, unless
    it is a secret)."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        lines = [f"  {name}: {why}" for name, why in self.problems.items()]
        super().__init__("invalid settings:\n" + "\n".join(lines))


# Settings that need others: WhatsApp's four together; a webhook URL its token and secret.
WHATSAPP = {
    "WHATSAPP_ACCESS_TOKEN": "whatsapp_access_token",
    "WHATSAPP_PHONE_NUMBER_ID": "whatsapp_phone_number_id",
    "WHATSAPP_APP_SECRET": "whatsapp_app_secret",
    "WHATSAPP_VERIFY_TOKEN": "whatsapp_verify_token",
}
WEBHOOK = {
    "TELEGRAM_BOT_TOKEN": "telegram_bot_token",
    "TELEGRAM_WEBHOOK_SECRET": "telegram_webhook_secret",
}


def channel_problems(seen: Mapping[str, object]) -> dict[str, str]:
    """The variables other settings need that are not set, from the fields read so far
    (by field name). A field missing from `seen` failed its own check: it counts as set,
    its error is named already."""

    def unset(field: str) -> bool:
        return field in seen and not seen[field]

    problems = {}
    missing = [name for name, field in WHATSAPP.items() if unset(field)]
    if 0 < len(missing) < len(WHATSAPP):
        given = ", ".join(name for name in WHATSAPP if name not in missing)
        problems[", ".join(missing)] = f"not set; WhatsApp needs all four (set: {given})"
    if seen.get("telegram_webhook_url"):  # the secret is checked on every call
        for name in (n for n, field in WEBHOOK.items() if unset(field)):
            problems[name] = "not set; webhook mode (TELEGRAM_WEBHOOK_URL) needs it"
    return problems


def shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 80 else text[:79] + "…")


def closest(name: str, candidates: list[str]) -> str | None:
    """The candidate `name` was most likely meant as: a near spelling, else the shortest
    one it abbreviates (`window` → `window_exchanges`)."""
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if match:
        return match[0]
    longer = [c for c in candidates if len(name) >= 3 and c.startswith(name)]
    return min(longer, key=len) if longer else None
