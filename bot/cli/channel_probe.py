"""`ventana doctor --live`: are the channel credentials accepted, without sending anything?

Telegram answers `getMe` with the bot's username when the token is valid; the Graph API
answers `GET /{phone-number-id}` with the display number when the access token may use
that number. Neither call sends a message. Tokens travel only in the request (the
Telegram token is part of its URL, so no URL is ever shown).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from config.checks import describe_unknown, names_in_use, offline_behind_channel, unknown_variables
from config.settings import Settings
from providers.probe import ProbeResult

TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class ChannelCheck(ProbeResult):
    """A live check's result (as a model probe's), about one channel."""

    channel: str


def doctor_warnings(settings: Settings) -> None:
    """Print what is legal but probably a mistake (doctor's WARN lines; they do not fail it)."""
    offline = offline_behind_channel(settings)
    if offline is not None:
        print(f"WARN  {'chat model':<14} {offline}")
    for name, guess in unknown_variables(names_in_use()):
        print(f"WARN  {'environment':<14} {describe_unknown(name, guess)}")


async def check_channels(
    settings: Settings, client: httpx.AsyncClient | None = None
) -> list[ChannelCheck]:
    """One check per configured channel (none for the console)."""
    own = client is None
    http = client or httpx.AsyncClient(timeout=TIMEOUT_S)
    try:
        live = {"telegram": _telegram, "whatsapp": _whatsapp}
        return [await _timed(name, live[name](settings, http)) for name in settings.channels]
    finally:
        if own:
            await http.aclose()


async def _timed(channel: str, work: Any) -> ChannelCheck:
    start = time.monotonic()
    try:
        ok, detail = await work
    except httpx.HTTPError as exc:  # the message of some may carry the URL: name the kind only
        ok, detail = False, f"unreachable ({type(exc).__name__})"
    return ChannelCheck(ok, time.monotonic() - start, detail, channel=channel)


async def _telegram(settings: Settings, http: httpx.AsyncClient) -> tuple[bool, str]:
    assert settings.telegram_bot_token is not None
    token = settings.telegram_bot_token.get_secret_value()
    response = await http.post(f"{settings.telegram_base_url}{token}/getMe")  # as the SDK does
    body = _json(response)
    if response.status_code == 200 and body.get("ok"):
        return True, f"bot @{body.get('result', {}).get('username', '?')}"
    why = body.get("description") or f"HTTP {response.status_code}"
    return False, f"token refused: {why}"


async def _whatsapp(settings: Settings, http: httpx.AsyncClient) -> tuple[bool, str]:
    assert settings.whatsapp_access_token is not None
    token = settings.whatsapp_access_token.get_secret_value()
    url = f"{settings.whatsapp_graph_url.rstrip('/')}/{settings.whatsapp_phone_number_id}"
    response = await http.get(
        url,
        params={"fields": "display_phone_number,verified_name"},
        headers={"Authorization": f"Bearer {token}"},
    )
    body = _json(response)
    if response.status_code == 200 and "error" not in body:
        number = body.get("display_phone_number", settings.whatsapp_phone_number_id)
        return True, f"number {number} ({body.get('verified_name', 'no verified name')})"
    error = body.get("error")
    why = (error.get("message") if isinstance(error, dict) else None) or (
        f"HTTP {response.status_code}"
    )
    return False, f"access token or phone number id refused: {why}"


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
