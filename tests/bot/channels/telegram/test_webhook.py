"""Webhook mode: the secret header is checked first; 200 only once the update is committed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.telegram import Harness, telegram_bot, text_json

URL = "https://bot.example.com/telegram/webhook"
SECRET = "s3cret-Token_1-webhook"
UNKNOWN = "telegram:unknown"
BAD_SENDER = {"id": "x", "is_bot": False, "first_name": "A"}
WEBHOOK: dict[str, Any] = {"telegram_webhook_url": URL, "telegram_webhook_secret": SECRET}


async def inbox(h: Harness, key: str) -> list[dict[str, Any]]:
    rows = (await h.app.store.export(key))["inbox"]
    assert isinstance(rows, list)
    return rows


async def test_start_sets_the_webhook_with_its_secret_and_never_polls(tmp_path: Path) -> None:
    """setWebhook carries the URL, the secret and the update types; no getUpdates."""
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        (params,) = h.fake.params_of("setWebhook")
        assert params["url"] == URL
        assert params["secret_token"] == SECRET
        assert json.loads(params["allowed_updates"]) == ["message"]
        assert "getUpdates" not in h.fake.methods()
        assert "deleteWebhook" not in h.fake.methods()


async def test_missing_or_wrong_secret_is_forbidden_and_stores_nothing(tmp_path: Path) -> None:
    """403 without the right X-Telegram-Bot-Api-Secret-Token; nothing reaches the inbox."""
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        body = text_json(h.fake.text(5, "let me in"))
        assert await h.channel.handle_webhook(body, None) == 403
        assert await h.channel.handle_webhook(body, "wrong") == 403
        assert await h.channel.handle_webhook(body, "") == 403
        await h.app.handler.drain()
        assert await inbox(h, "telegram:5") == []
        assert h.fake.sent == []


async def test_right_secret_commits_before_answering_200(tmp_path: Path) -> None:
    """With the right secret the update is in the inbox when 200 is returned, then answered."""
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        update = h.fake.text(5, "hello")
        h.model.delay = 0.2  # still thinking when we look
        assert await h.channel.handle_webhook(text_json(update), SECRET) == 200
        rows = await inbox(h, "telegram:5")
        assert [r["external_id"] for r in rows] == [str(update["update_id"])]
        assert await h.wait_replies(5, 1) == ["re: hello"]


async def rejected(h: Harness) -> list[tuple[str, str, str]]:
    """(key, external id, reason) of the rejected inbox rows of chat 5 and of no chat."""
    found = []
    for key in ("telegram:unknown", "telegram:5"):
        for row in await inbox(h, key):
            if row["status"] == "rejected":
                found.append((row["session_key"], row["external_id"], row["reason"]))
    return found


async def test_malformed_bodies_are_acknowledged_and_recorded_once(tmp_path: Path) -> None:
    """Broken JSON, a list, no update_id, bad bytes: 200 (never resent), one rejected row each."""
    bodies = (b"{not json", b"[1, 2]", b'{"message": {}}', b"\xff", b"[" * 100_000)
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        for body in bodies * 2:  # the second round is Telegram's redelivery
            assert await h.channel.handle_webhook(body, SECRET) == 200
        rows = await rejected(h)
        assert len(rows) == len(bodies)
        assert {reason for _, _, reason in rows} == {
            "not JSON",
            "not an update (no integer update_id)",
        }


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        ({"text": 5}, "telegram:5", "text is not a string"),
        ({"chat": {"id": "abc", "type": "private"}}, UNKNOWN, "chat.id is not an integer"),
        ({"from": BAD_SENDER}, "telegram:5", "from.id is not an integer"),
    ],
)
async def test_updates_with_wrong_field_types_are_rejected_not_queued(
    tmp_path: Path, change: dict[str, Any], key: str, reason: str
) -> None:
    """`"text": 5` or `"chat": {"id": "abc"}`: 200, rejected with its reason, nothing pending."""
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        update = h.fake.text(5, "hello")
        update["message"].update(change)
        assert await h.channel.handle_webhook(text_json(update), SECRET) == 200
        await h.app.handler.drain()
        assert await rejected(h) == [(key, str(update["update_id"]), reason)]
        assert await h.app.store.inbox_unfinished() == []
        assert h.model.requests == []
        assert h.fake.sent == []


async def test_webhook_redelivery_is_processed_once(tmp_path: Path) -> None:
    """Telegram retrying a delivered update gets 200 again and no second answer."""
    async with telegram_bot(tmp_path / "v.db", **WEBHOOK) as h:
        body = text_json(h.fake.text(5, "once"))
        assert await h.channel.handle_webhook(body, SECRET) == 200
        assert await h.channel.handle_webhook(body, SECRET) == 200
        await h.wait_replies(5, 1)
        await h.app.handler.drain()
        assert h.fake.texts_to(5) == ["re: once"]
        assert len(h.model.requests) == 1


async def test_before_start_the_webhook_asks_telegram_to_retry(tmp_path: Path) -> None:
    """An update arriving before the bot has logged in gets 503, so Telegram sends it again."""
    async with telegram_bot(tmp_path / "v.db", start=False, **WEBHOOK) as h:
        body = text_json(h.fake.text(5, "early"))
        assert await h.channel.handle_webhook(body, SECRET) == 503


async def test_a_refused_webhook_url_is_a_clear_error(tmp_path: Path) -> None:
    """setWebhook rejected by Telegram stops start with a message naming the variable."""
    async with telegram_bot(tmp_path / "v.db", start=False, **WEBHOOK) as h:
        h.fake.fail_next("setWebhook", 400, "Bad Request: bad webhook: HTTPS url must be provided")
        with pytest.raises(ValueError, match=r"(?i)TELEGRAM_WEBHOOK_URL: .*https url"):
            await h.channel.start()
        await h.channel.stop()
