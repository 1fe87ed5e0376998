"""Groups: the bot answers only when addressed; keys per VENTANA_GROUP_MODE."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from telegram import Update

from bot.channels.telegram.convert import BotIdentity, strip_mention, to_inbound
from bot.conversation.texts import t
from memory.types import SessionKey
from tests.support.bot_api import BOT_ID, BOT_USERNAME, FakeBotAPI
from tests.support.telegram import telegram_bot

GROUP = -100500
ME = BotIdentity(BOT_ID, BOT_USERNAME)


def mention(text: str, at: int = 0) -> list[dict[str, Any]]:
    return [{"type": "mention", "offset": at, "length": len(BOT_USERNAME) + 1}]


def bot_message(fake: FakeBotAPI) -> dict[str, Any]:
    return {
        "message_id": 1,
        "date": int(time.time()),
        "text": "an earlier answer",
        "chat": {"id": GROUP, "type": "supergroup", "title": "Team"},
        "from": {"id": BOT_ID, "is_bot": True, "first_name": "Ventana"},
    }


async def test_group_answers_only_when_addressed(tmp_path: Path) -> None:
    """No mention, no reply; a mention, a reply to the bot or /cmd@bot gets an answer."""
    async with telegram_bot(tmp_path / "v.db") as h:
        f = h.fake
        text = f"@{BOT_USERNAME} what time is it?"
        f.push(
            f.text(GROUP, "hello everyone", user_id=42),
            f.text(GROUP, text, user_id=42, entities=mention(text)),
            f.text(GROUP, "and tomorrow?", user_id=43, reply_to_message=bot_message(f)),
            f.text(GROUP, "/summary@other_bot", user_id=42),
            f.text(
                GROUP,
                "reply to someone",
                user_id=43,
                reply_to_message=f.message(GROUP, "hi", user_id=42),
            ),
            f.text(GROUP, f"/help@{BOT_USERNAME}", user_id=42),
        )
        replies = await h.wait_replies(GROUP, 3)
        assert replies == ["re: what time is it?", "re: and tomorrow?", t("en", "help")]
        seen = [m.content for r in h.model.requests for m in r.messages if m.role == "user"]
        assert "hello everyone" not in seen
        assert "reply to someone" not in seen


async def test_per_user_mode_keys_each_member_apart(tmp_path: Path) -> None:
    """With group_mode=per_user, each member of a group has a conversation of their own."""
    async with telegram_bot(tmp_path / "v.db", group_mode="per_user") as h:
        f = h.fake
        for user in (42, 43):
            text = f"@{BOT_USERNAME} I am {user}"
            f.push(f.text(GROUP, text, user_id=user, entities=mention(text)))
        await h.wait_replies(GROUP, 2)
        for user in (42, 43):
            rows = await h.exchanges(f"telegram:{GROUP}:{user}")
            assert [r["user_text"] for r in rows] == [f"I am {user}"]
        assert await h.exchanges(f"telegram:{GROUP}") == []


def convert(fake: FakeBotAPI, message: dict[str, Any], mode: str = "shared") -> Any:
    return to_inbound(Update.de_json(fake.update(message), None), ME, mode)


def test_conversion_of_private_and_group_messages() -> None:
    """Keys, users and external ids come from the update; the mention is stripped."""
    f = FakeBotAPI()
    private = convert(f, f.message(7, "hola"))
    assert (str(private.key), private.user, private.kind, private.text) == (
        "telegram:7",
        "telegram:7",
        "text",
        "hola",
    )
    assert private.external_id == str(f.next_update_id)
    text = f"please @{BOT_USERNAME.upper()} help"
    group = convert(f, f.message(GROUP, text, user_id=9, entities=mention(text, 7)), "per_user")
    assert (str(group.key), group.text) == (f"telegram:{GROUP}:9", "please help")
    assert group.key == SessionKey("telegram", str(GROUP), "9")  # built once, at the edge


def test_media_is_unsupported_when_addressed_and_ignored_otherwise() -> None:
    """A photo in private is 'unsupported'; in a group only when its caption mentions the bot."""
    f = FakeBotAPI()
    photo = [{"file_id": "p", "file_unique_id": "q", "width": 9, "height": 9}]
    assert convert(f, f.message(7, photo=photo)).kind == "unsupported"
    assert convert(f, f.message(GROUP, photo=photo, user_id=9)) is None
    caption = f"@{BOT_USERNAME} look"
    addressed = f.message(
        GROUP, photo=photo, user_id=9, caption=caption, caption_entities=mention(caption)
    )
    assert convert(f, addressed).kind == "unsupported"


def test_text_mention_and_other_bots_and_bare_commands() -> None:
    """A text mention of the bot counts; messages from bots never do; bare commands do."""
    f = FakeBotAPI()
    by_name = [
        {
            "type": "text_mention",
            "offset": 0,
            "length": 7,
            "user": {"id": BOT_ID, "is_bot": True, "first_name": "Ventana"},
        }
    ]
    assert convert(f, f.message(GROUP, "Ventana, hi", user_id=9, entities=by_name)) is not None
    from_bot = f.message(GROUP, f"@{BOT_USERNAME} hi", user_id=9, entities=mention("x"))
    from_bot["from"]["is_bot"] = True
    assert convert(f, from_bot) is None
    assert convert(f, f.message(GROUP, "/reset", user_id=9)).text == "/reset"


def test_strip_mention_leaves_other_handles_alone() -> None:
    """Only the bot's own handle goes; emails and longer handles stay."""
    assert strip_mention("hi @ventana_bot!", "ventana_bot") == "hi !"
    assert strip_mention("@ventana_botanist ok", "ventana_bot") == "@ventana_botanist ok"
    assert strip_mention("mail a@ventana_bot.com", "ventana_bot") == "mail a@ventana_bot.com"


async def test_debug_in_a_shared_group_is_the_operators_alone(tmp_path: Path) -> None:
    """After an operator's /debug on in a shared group, a member's mention gets a real,
    stored reply with nothing of the debug view in it; the operator's next one is a dry run."""
    async with telegram_bot(tmp_path / "v.db") as h:
        f = h.fake
        key = f"telegram:{GROUP}"
        given = f"@{BOT_USERNAME} my phone is 600111222"
        f.push(f.text(GROUP, given, user_id=43, entities=mention(given)))
        await h.wait_replies(GROUP, 1)
        f.push(f.text(GROUP, f"/debug@{BOT_USERNAME} on", user_id=1))
        await h.wait_replies(GROUP, 2)
        asked = f"@{BOT_USERNAME} when do you open?"
        f.push(f.text(GROUP, asked, user_id=42, entities=mention(asked)))
        replies = await h.wait_replies(GROUP, 3)
        assert replies[1] == t("en", "debug_on")
        assert replies[2] == "re: when do you open?"
        assert "600111222" not in replies[2]
        assert [r["user_text"] for r in await h.exchanges(key)][-1] == "when do you open?"
        calls = len(h.model.requests)
        probe = f"@{BOT_USERNAME} and on sunday?"
        f.push(f.text(GROUP, probe, user_id=1, entities=mention(probe)))
        replies = await h.wait_replies(GROUP, 4)
        assert "600111222" in replies[3]  # the dry-run view shows what would be sent
        assert len(h.model.requests) == calls
        assert [r["user_text"] for r in await h.exchanges(key)][-1] == "when do you open?"


async def test_forget_in_a_shared_group_needs_an_admin_or_an_operator(tmp_path: Path) -> None:
    """A plain member's /forget in a shared group is refused and erases nothing; the
    group's creator or an administrator (asked with getChatMember) may; so may an operator."""
    async with telegram_bot(tmp_path / "v.db") as h:
        f = h.fake
        f.admins.update({50: "creator", 51: "administrator"})
        key = f"telegram:{GROUP}"
        said = f"@{BOT_USERNAME} remember 42"
        f.push(f.text(GROUP, said, user_id=43, entities=mention(said)))
        f.push(f.text(GROUP, f"/forget@{BOT_USERNAME} confirm", user_id=43))
        replies = await h.wait_replies(GROUP, 2)
        assert replies[1] == t("en", "forget_not_admin")
        assert [r["user_text"] for r in await h.exchanges(key)] == ["remember 42"]
        asked = [p["user_id"] for p in f.params_of("getChatMember")]
        assert asked == ["43"]
        f.push(f.text(GROUP, f"/forget@{BOT_USERNAME} confirm", user_id=51))
        replies = await h.wait_replies(GROUP, 3)
        assert replies[2] == t("en", "forget_done")
        assert await h.exchanges(key) == []
        for user in (50, 1):  # the creator; an operator (not asked: settings say so)
            f.push(f.text(GROUP, f"@{BOT_USERNAME} again", user_id=43, entities=mention("x")))
            f.push(f.text(GROUP, f"/forget@{BOT_USERNAME} confirm", user_id=user))
        replies = await h.wait_replies(GROUP, 7)
        assert replies[4] == replies[6] == t("en", "forget_done")
        assert [p["user_id"] for p in f.params_of("getChatMember")] == ["43", "51", "50"]
