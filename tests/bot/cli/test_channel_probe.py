"""`doctor --live` checks the channel credentials against the configured base URLs."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from pydantic import SecretStr

from bot.cli.channel_probe import check_channels
from config.settings import Settings
from tests.bot.cli.test_cli import _run
from tests.support.bot_api import BOT_USERNAME, TOKEN, FakeBotAPI

GRAPH = "http://graph.test/v21.0"
WA = {
    "whatsapp_access_token": SecretStr("wa-token"),
    "whatsapp_phone_number_id": "555",
    "whatsapp_app_secret": SecretStr("app-secret"),
    "whatsapp_verify_token": SecretStr("verify"),
    "whatsapp_graph_url": GRAPH,
}


def graph(accept: str) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A fake Graph API that knows phone number 555 and the token `accept`."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        assert request.url.path == "/v21.0/555", f"unexpected request {request.url}"
        if request.headers.get("authorization") != f"Bearer {accept}":
            error = {"message": "Invalid OAuth access token.", "type": "OAuthException"}
            return httpx.Response(401, json={"error": error})
        return httpx.Response(
            200, json={"display_phone_number": "+34 600 111 222", "verified_name": "Acme"}
        )

    return httpx.MockTransport(handle), seen


async def test_telegram_token_checked_with_get_me() -> None:
    """A valid token answers getMe at TELEGRAM_BASE_URL: ok, with the bot's username."""
    api, urls = FakeBotAPI(), []
    inner = api.transport()

    async def record(request: httpx.Request) -> httpx.Response:
        urls.append(str(request.url))
        return await inner.handle_async_request(request)

    settings = Settings(
        telegram_bot_token=SecretStr(TOKEN), telegram_base_url="http://tg.test/bot"
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
        (check,) = await check_channels(settings, client)
    assert check.ok
    assert check.detail == f"bot @{BOT_USERNAME}"
    assert api.methods() == ["getMe"]
    assert urls == [f"http://tg.test/bot{TOKEN}/getMe"]


async def test_refused_telegram_token_fails_without_showing_it() -> None:
    """A 401 from getMe is a failed check carrying Telegram's reason, never the token."""
    api = FakeBotAPI()
    api.fail_next("getMe", 401, "Unauthorized")
    settings = Settings(
        telegram_bot_token=SecretStr(TOKEN), telegram_base_url="http://tg.test/bot"
    )
    async with httpx.AsyncClient(transport=api.transport()) as client:
        (check,) = await check_channels(settings, client)
    assert not check.ok
    assert "Unauthorized" in check.detail
    assert TOKEN not in check.detail


async def test_unreachable_telegram_is_a_failed_check() -> None:
    """A connection error is reported as unreachable, not raised."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    settings = Settings(
        telegram_bot_token=SecretStr(TOKEN), telegram_base_url="http://tg.test/bot"
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        (check,) = await check_channels(settings, client)
    assert (check.ok, check.detail) == (False, "unreachable (ConnectError)")


async def test_whatsapp_token_checked_against_the_phone_number() -> None:
    """The access token reads its phone number at WHATSAPP_GRAPH_URL: ok, with the number."""
    transport, seen = graph(accept="wa-token")
    async with httpx.AsyncClient(transport=transport) as client:
        (check,) = await check_channels(Settings(**WA), client)
    assert check.ok
    assert check.detail == "number +34 600 111 222 (Acme)"
    assert seen[0].url.params["fields"] == "display_phone_number,verified_name"


async def test_refused_whatsapp_token_fails_with_metas_reason() -> None:
    """A token Meta refuses is a failed check with Meta's message, never the token."""
    transport, _ = graph(accept="another-token")
    async with httpx.AsyncClient(transport=transport) as client:
        (check,) = await check_channels(Settings(**WA), client)
    assert not check.ok
    assert "Invalid OAuth access token." in check.detail
    assert "wa-token" not in json.dumps(check.detail)


async def test_console_only_has_no_channel_checks() -> None:
    """Nothing configured, nothing checked (and no request made)."""

    def fail(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.url}")

    async with httpx.AsyncClient(transport=httpx.MockTransport(fail)) as client:
        assert await check_channels(Settings(), client) == []


def test_doctor_live_checks_telegram_end_to_end(tmp_path: Path) -> None:
    """`doctor --live` against a loopback Bot API: ok with the bot's name; a wrong token
    fails the doctor (exit 1) without printing the token."""
    telegram = FakeBotAPI()
    with telegram.server:
        base = telegram.base_url(1)
        good = _run(["doctor", "--live"], tmp_path, TELEGRAM_BOT_TOKEN=TOKEN,
                    TELEGRAM_BASE_URL=base)  # fmt: skip
        bad = _run(["doctor", "--live"], tmp_path, TELEGRAM_BOT_TOKEN="999:WRONG-secret",
                   TELEGRAM_BASE_URL=base)  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert "telegram live" in good.stdout
    assert "bot @ventana_bot" in good.stdout
    assert bad.returncode == 1
    assert "FAIL  telegram live" in bad.stdout
    assert "WRONG-secret" not in bad.stdout + bad.stderr
