"""The Telegram channel in polling mode, end to end: PTB → fake Bot API, real handler, SQLite."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.conversation.texts import t
from tests.support.bot_api import TOKEN, FakeBotAPI
from tests.support.telegram import telegram_bot

OPERATOR, STRANGER = 1, 2


async def test_start_registers_commands_and_polls(tmp_path: Path) -> None:
    """Start logs in, sets the command menu (operators' with /debug and /usage), then polls."""
    async with telegram_bot(tmp_path / "v.db", language="es") as h:
        await h.wait_for(lambda: "getUpdates" in h.fake.methods())
        methods = h.fake.methods()
        assert methods[:2] == ["getMe", "setMyCommands"]
        assert methods.index("deleteWebhook") < methods.index("getUpdates")
        public, operator = h.fake.params_of("setMyCommands")
        names = [c["command"] for c in json.loads(public["commands"])]
        assert names == ["start", "help", "reset", "undo", "summary", "forget"]
        assert json.loads(public["commands"])[2]["description"] == "Empezar de cero"
        assert json.loads(operator["scope"]) == {"type": "chat", "chat_id": OPERATOR}
        operator_names = [c["command"] for c in json.loads(operator["commands"])]
        assert operator_names == [*names, "debug", "usage"]


async def test_thirty_turn_private_conversation(tmp_path: Path) -> None:
    """Thirty messages in one chat: every reply delivered in order, thirty exchanges stored."""
    async with telegram_bot(tmp_path / "v.db") as h:
        for i in range(30):
            h.fake.push(h.fake.text(5, f"message {i}"))
            await h.wait_replies(5, i + 1)
        assert h.fake.texts_to(5) == [f"re: message {i}" for i in range(30)]
        assert len(await h.exchanges("telegram:5")) == 30
        assert all("parse_mode" not in s.params for s in h.fake.sent)


async def test_reset_hides_earlier_turns_from_the_model(tmp_path: Path) -> None:
    """/reset answers in the configured language and the next request starts afresh."""
    async with telegram_bot(tmp_path / "v.db") as h:
        for text in ("my order is #4821", "it is late", "/reset", "new question"):
            h.fake.push(h.fake.text(5, text))
        replies = await h.wait_replies(5, 4)
        assert replies[2] == t("en", "reset")
        last = h.model.requests[-1]
        assert [m.content for m in last.messages] == ["new question"]
        assert "#4821" not in last.system


async def test_debug_mode_by_an_operator_is_a_dry_run(tmp_path: Path) -> None:
    """An operator's /debug on makes the next message return the view, without the model."""
    async with telegram_bot(tmp_path / "v.db") as h:
        h.fake.push(h.fake.text(OPERATOR, "/debug on"))
        await h.wait_replies(OPERATOR, 1)
        h.fake.push(h.fake.text(OPERATOR, "hello there"))
        replies = await h.wait_replies(OPERATOR, 2)
        assert replies[0] == t("en", "debug_on")
        assert "hello there" in replies[1]
        assert replies[1] != "re: hello there"
        assert h.model.requests == []
        assert await h.exchanges(f"telegram:{OPERATOR}") == []


async def test_debug_by_a_stranger_is_refused_politely(tmp_path: Path) -> None:
    """Anyone else gets a refusal that reveals nothing, and debug stays off."""
    async with telegram_bot(tmp_path / "v.db") as h:
        h.fake.push(h.fake.text(STRANGER, "/debug on"), h.fake.text(STRANGER, "hi"))
        replies = await h.wait_replies(STRANGER, 2)
        assert replies == [t("en", "not_operator"), "re: hi"]
        state = await h.app.store.peek_state(f"telegram:{STRANGER}", 1)
        assert state is not None
        assert not state.debug
        assert len(h.model.requests) == 1


async def test_sticker_gets_the_only_text_answer(tmp_path: Path) -> None:
    """A sticker is answered with "only text" and never reaches the model."""
    sticker = {
        "file_id": "f",
        "file_unique_id": "u",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "type": "regular",
    }
    async with telegram_bot(tmp_path / "v.db") as h:
        h.fake.push(h.fake.update(h.fake.message(5, sticker=sticker)))
        assert await h.wait_replies(5, 1) == [t("en", "only_text")]
        assert h.model.requests == []


async def test_edits_and_service_messages_are_ignored(tmp_path: Path) -> None:
    """An edited message and a member joining get no answer; the next text does."""
    async with telegram_bot(tmp_path / "v.db") as h:
        edited = h.fake.update(
            h.fake.message(5, "edited text", edit_date=int(time.time())), kind="edited_message"
        )
        joined = h.fake.update(
            h.fake.message(-100, new_chat_members=[{"id": 7, "is_bot": False, "first_name": "Bo"}])
        )
        h.fake.push(edited, joined, h.fake.text(5, "after"))
        assert await h.wait_replies(5, 1) == ["re: after"]
        assert [m.content for r in h.model.requests for m in r.messages] == ["after"]
        assert h.fake.texts_to(-100) == []


async def test_redelivered_update_is_processed_once(tmp_path: Path) -> None:
    """The same update_id delivered again: one model call, one exchange, one reply."""
    async with telegram_bot(tmp_path / "v.db") as h:
        update = h.fake.text(5, "only once")
        h.fake.push(update)
        await h.wait_replies(5, 1)
        h.fake.push(update, h.fake.text(5, "next"))  # as if the confirmation was lost
        await h.wait_replies(5, 2)
        assert h.fake.texts_to(5) == ["re: only once", "re: next"]
        assert len(h.model.requests) == 2
        assert len(await h.exchanges("telegram:5")) == 2


class FlakyInbox:
    """The real store, but the n-th inbox write fails like a locked database."""

    def __init__(self, store: Any, fail_on: int) -> None:
        self.store, self.fail_on, self.writes = store, fail_on, 0

    async def begin_turn(self, *args: Any, **kwargs: Any) -> Any:
        self.writes += 1
        if self.writes == self.fail_on:
            raise sqlite3.OperationalError("database is locked")
        return await self.store.begin_turn(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def test_offset_advances_only_after_the_whole_batch_is_committed(tmp_path: Path) -> None:
    """A failed commit keeps the offset, so the batch comes again; nothing is lost or doubled."""
    db = tmp_path / "v.db"
    fake = FakeBotAPI()
    first, second = fake.text(5, "one"), fake.text(5, "two")
    committed_at_confirm: list[set[str]] = []

    async def check(offset: int | None) -> None:
        if offset is not None:
            with sqlite3.connect(db) as conn:
                rows = conn.execute("SELECT external_id FROM inbox").fetchall()
            committed_at_confirm.append({r[0] for r in rows})

    async with telegram_bot(db, fake=fake) as h:
        h.app.handler.intake.store = FlakyInbox(h.app.store, fail_on=2)  # type: ignore[assignment]
        fake.on_get_updates = check
        fake.push(first, second)
        await h.wait_replies(5, 2)
        await h.wait_for(lambda: second["update_id"] + 1 in fake.offsets)
    assert fake.offsets[:3] == [None, None, second["update_id"] + 1]
    assert committed_at_confirm[0] == {str(first["update_id"]), str(second["update_id"])}
    assert fake.texts_to(5) == ["re: one", "re: two"]
    assert len(h.model.requests) == 2


async def test_restart_finishes_unfinished_inbox_entries(tmp_path: Path) -> None:
    """Entries a crash left behind are answered (or re-delivered) when a new channel starts."""
    db = tmp_path / "v.db"
    now = datetime.now(UTC)
    async with telegram_bot(db, start=False) as h:
        store = h.app.store
        await store.inbox_add("telegram:5", "71", "telegram:5", "text", "still there?", now)
        answered = await store.inbox_add("telegram:6", "72", "telegram:6", "text", "q", now)
        assert answered is not None
        await store.inbox_mark(answered.id, "answered", ["stored reply"], at=now)
        await store.inbox_add("whatsapp:34600", "wamid.1", "whatsapp:34600", "text", "hola", now)
    async with telegram_bot(db) as h:
        assert await h.wait_replies(5, 1) == ["re: still there?"]
        assert await h.wait_replies(6, 1) == ["stored reply"]
        assert [m.content for r in h.model.requests for m in r.messages] == ["still there?"]
        await h.app.handler.drain()
        left = await h.app.store.inbox_unfinished()
        assert [e.key for e in left] == ["whatsapp:34600"]  # not Telegram's to deliver


async def test_two_hundred_chats_at_once_keep_per_chat_order(tmp_path: Path) -> None:
    """200 chats x 3 messages in big batches: each chat's replies in order, nothing left over."""
    async with telegram_bot(tmp_path / "v.db") as h:
        chats = range(10_001, 10_201)
        h.fake.push(*[h.fake.text(c, f"{c}-{i}") for i in range(3) for c in chats])
        await h.wait_for(lambda: len(h.fake.sent) == 600, within=25)
        for chat in chats:
            assert h.fake.texts_to(chat) == [f"re: {chat}-{i}" for i in range(3)]
        await h.app.handler.drain()
        assert h.app.handler.serial.active_keys == 0


async def test_bot_api_failures_while_polling_are_retried(tmp_path: Path) -> None:
    """A 502 or a 409 conflict on getUpdates is retried with backoff; messages still arrive."""
    fake = FakeBotAPI()
    fake.fail_next("getUpdates", 502, "Bad Gateway")
    fake.fail_next("getUpdates", 409, "Conflict: terminated by other getUpdates request")
    async with telegram_bot(tmp_path / "v.db", fake=fake) as h:
        h.fake.push(h.fake.text(5, "still here"))
        assert await h.wait_replies(5, 1) == ["re: still here"]
        assert len(h.fake.params_of("getUpdates")) >= 3


async def test_a_rejected_token_is_a_clear_error_that_does_not_quote_it(tmp_path: Path) -> None:
    """getMe answering 401 stops start with a message naming the variable, not the token."""
    fake = FakeBotAPI()
    fake.fail_next("getMe", 401, "Unauthorized")
    async with telegram_bot(tmp_path / "v.db", fake=fake, start=False) as h:
        with pytest.raises(ValueError, match="TELEGRAM_BOT_TOKEN") as caught:
            await h.channel.start()
        assert TOKEN not in str(caught.value)
        assert caught.value.__suppress_context__


@pytest.mark.parametrize(
    "broken",
    [
        {"date": "yesterday"},  # PTB cannot build the message's date
        {"chat": "five"},  # nor a chat from a string
        {"from": 5},  # nor a sender from a number
    ],
)
async def test_an_update_ptb_cannot_read_is_rejected_and_polling_goes_on(
    tmp_path: Path, broken: dict[str, Any]
) -> None:
    """A batch holding an update python-telegram-bot cannot parse: the update is recorded
    as rejected with its reason, the others are answered, and the offset moves past it
    (polling never retries the same batch forever)."""
    async with telegram_bot(tmp_path / "v.db") as h:
        bad = h.fake.text(5, "unreadable")
        bad["message"].update(broken)
        h.fake.push(h.fake.text(5, "before"), bad, h.fake.text(5, "after"))
        assert await h.wait_replies(5, 2) == ["re: before", "re: after"]
        rows = (await h.app.store.export("telegram:unknown"))["inbox"]
        assert isinstance(rows, list)
        rejected = [r for r in rows if r["status"] == "rejected"]
        assert [r["external_id"] for r in rejected] == [str(bad["update_id"])]
        assert "unreadable" in rejected[0]["reason"]
        h.fake.push(h.fake.text(5, "later"))
        assert (await h.wait_replies(5, 3))[-1] == "re: later"
        assert h.model.requests[0].messages[-1].content == "before"
