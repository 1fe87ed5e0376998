"""Delivery: long replies split, plain text, flood control, blocked users, "typing…"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from bot.channels.split import utf16_len
from tests.support.fakes import ScriptedChatModel, echo
from tests.support.telegram import telegram_bot


def visible(text: str) -> str:
    return "".join(text.split())


async def test_long_reply_is_split_within_telegram_limits(tmp_path: Path) -> None:
    """A 10k-unit reply with emoji arrives as several plain messages, nothing lost or broken."""

    def para(n: int) -> str:
        return " ".join(
            f"Paso {n}.{i}: revisa el pedido #{4821 + i * n} 😀 del {i} de mayo 🇪🇸."
            for i in range(70)
        )

    long = "\n\n".join(para(n) for n in range(1, 4))
    assert utf16_len(long) > 2 * 4096
    model = ScriptedChatModel(reply=echo, replies={"explain everything": long}, name="echo")
    async with telegram_bot(tmp_path / "v.db", model=model) as h:
        h.fake.push(h.fake.text(5, "explain everything"))
        await h.wait_for(lambda: len(h.fake.texts_to(5)) >= 3)
        await h.app.handler.drain()
        chunks = h.fake.texts_to(5)
        assert all(utf16_len(chunk) <= 4096 for chunk in chunks)
        assert visible("".join(chunks)) == visible(long)
        assert chunks[0] == para(1)
        assert all(
            chunk.count("🇪🇸") * 2 == sum(0x1F1E6 <= ord(c) <= 0x1F1FF for c in chunk)
            for chunk in chunks
        )
        assert all("parse_mode" not in s.params for s in h.fake.sent)


async def test_flood_control_is_honoured_and_the_reply_still_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 with retry_after makes the outbox wait (bounded) and send again."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB 22 warns building RetryAfter otherwise
    async with telegram_bot(tmp_path / "v.db") as h:
        h.channel.outbox.max_retry_after = 0.01
        h.fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
        h.fake.push(h.fake.text(5, "hi"))
        assert await h.wait_replies(5, 1) == ["re: hi"]
        assert len(h.fake.params_of("sendMessage")) == 2


async def test_a_user_who_blocked_the_bot_is_dropped_quietly(tmp_path: Path) -> None:
    """403 Forbidden is logged at info, the entry is finished, and the bot carries on."""
    async with telegram_bot(tmp_path / "v.db") as h:
        h.fake.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user")
        with capture_logs() as logs:
            h.fake.push(h.fake.text(5, "bye"))
            await h.wait_for(lambda: len(h.fake.params_of("sendMessage")) == 1)
            await h.app.handler.drain()
        assert {"event": "telegram_blocked", "log_level": "info", "key": "telegram:5"}.items() <= (
            next(e for e in logs if e["event"] == "telegram_blocked").items()
        )
        assert not any(e["log_level"] in ("error", "critical") for e in logs)
        assert await h.app.store.inbox_unfinished() == []
        h.fake.push(h.fake.text(5, "back again"))
        assert await h.wait_replies(5, 1) == ["re: back again"]


async def test_typing_repeats_while_the_model_works_and_stops_after(tmp_path: Path) -> None:
    """sendChatAction(typing) is repeated during a slow turn and never after the reply."""
    async with telegram_bot(
        tmp_path / "v.db", model=ScriptedChatModel(reply=echo, delay=0.3, name="echo")
    ) as h:
        h.channel.outbox.typing_every = 0.05
        h.fake.push(h.fake.text(5, "think hard"))
        await h.wait_replies(5, 1)
        actions = h.fake.params_of("sendChatAction")
        assert len(actions) >= 3
        assert {a["action"] for a in actions} == {"typing"}
        last_call = h.fake.methods()[::-1].index("sendChatAction")
        assert last_call > h.fake.methods()[::-1].index("sendMessage")  # before the reply
        count = len(actions)
        await asyncio.sleep(0.2)
        assert len(h.fake.params_of("sendChatAction")) == count
