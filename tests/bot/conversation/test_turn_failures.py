"""Turns that break on something unexpected (a bug, not the database): the user hears an
apology, once; the entry is settled, `drain()` returns, the chat goes on."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from bot.app import App
from bot.conversation.texts import t
from memory.store.locks import Claim
from memory.types import InboxEntry, SessionKey
from providers.base import ChatRequest
from tests.bot.conversation.conftest import Collect, MakeApp, inbound, until_sent
from tests.support.fakes import ScriptedChatModel

SETTLE_S = 5.0  # a hang fails the test instead of blocking it


def _poisoned(request: ChatRequest) -> None:
    """A chat model adapter with a bug that one message's text sets off."""
    if request.messages[-1].content == "veneno":
        raise RuntimeError("adapter bug")


async def _app(make_app: MakeApp, sent: list[str]) -> App:
    app = await make_app(ScriptedChatModel(on_call=_poisoned))
    app.handler.register("telegram", Collect(sent))
    return app


async def test_an_unexpected_failure_is_apologised_for_once_and_the_entry_settled(
    make_app: MakeApp,
) -> None:
    """The user hears the generic apology, which is the entry's answer: marked done once
    delivered (never left for every next start to fail on again), nothing left queued,
    `drain()` returns, and the chat's next message is answered as usual."""
    sent: list[str] = []
    app = await _app(make_app, sent)
    future = await app.handler.submit(inbound("telegram:60", "veneno", ext="bug-1"))
    assert future is not None
    replies = await asyncio.wait_for(future, SETTLE_S)
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    apology = t("es", "error_generic")
    assert replies == [apology]
    assert sent == [apology]
    assert app.handler.intake.queued == set()
    entry = await app.store.inbox_get("telegram:60", "bug-1")
    assert entry is not None
    assert entry.status == "done"
    assert await app.handler.recover() == 0  # not tried again, not apologised for again
    after = await app.handler.handle(inbound("telegram:60", "hola", ext="bug-2"))
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    assert after
    assert sent == [apology, *after]


async def test_a_retry_that_breaks_unexpectedly_settles_its_entry(make_app: MakeApp) -> None:
    """A turn the database failed is tried again; when the retry breaks on a bug, the user
    hears the apology and the entry is settled, not left queued here for good (where a
    redelivery or `recover` would skip it)."""
    sent: list[str] = []
    app = await _app(make_app, sent)
    app.handler.store_retry_s = (0.01,)
    get = app.store.inbox_get

    async def broken(key: str, external_id: str) -> InboxEntry | None:
        app.store.inbox_get = get  # type: ignore[method-assign]
        raise RuntimeError("bug in the retry")

    record = app.engine.store.record_exchange

    async def down_once(new: Any) -> Any:
        app.engine.store.record_exchange = record  # type: ignore[method-assign]
        app.store.inbox_get = broken  # type: ignore[method-assign]
        raise sqlite3.OperationalError("disk I/O error")

    app.engine.store.record_exchange = down_once  # type: ignore[method-assign]
    assert await app.handler.handle(inbound("telegram:61", "hola", ext="retry-1")) == []
    await until_sent(sent)
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    assert sent == [t("es", "error_generic")]
    assert app.handler.intake.queued == set()
    entry = await app.store.inbox_get("telegram:61", "retry-1")
    assert entry is not None
    assert entry.status == "done"


async def test_an_earlier_claimed_entry_that_breaks_does_not_take_the_chat_down(
    make_app: MakeApp,
) -> None:
    """A claim with an earlier entry left behind (PostgreSQL hands a chat's pending entries
    to whoever takes its lock next): that entry's failure is apologised for and settled,
    and the entry the claim was for is still answered."""
    sent: list[str] = []
    app = await _app(make_app, sent)
    at = datetime.now(UTC)
    left = await app.store.inbox_add("telegram:62", "old-1", "telegram:62", "text", "veneno", at)
    assert left is not None

    @contextlib.asynccontextmanager
    async def claim_with_the_left_one(entry: InboxEntry) -> AsyncIterator[Claim]:
        yield Claim((left, entry), exclusive=True)

    app.store.claim_turn = claim_with_the_left_one  # type: ignore[method-assign]
    future = await app.handler.submit(inbound("telegram:62", "hola", ext="new-1"))
    assert future is not None
    replies = await asyncio.wait_for(future, SETTLE_S)
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    assert replies
    assert sent == [t("es", "error_generic"), *replies]
    for external_id in ("old-1", "new-1"):
        entry = await app.store.inbox_get("telegram:62", external_id)
        assert entry is not None
        assert entry.status == "done"


class _SendFailsOnce(Collect):
    """An outbox whose first send breaks (a network error the channel's SDK raises)."""

    def __init__(self, sink: list[str]) -> None:
        super().__init__(sink)
        self.failed = False

    async def send(self, key: SessionKey, texts: Sequence[str]) -> None:
        if not self.failed:
            self.failed = True
            raise ConnectionError("channel down")
        await super().send(key, texts)


async def test_a_reply_that_fails_to_send_stands_and_is_sent_at_the_next_start(
    make_app: MakeApp,
) -> None:
    """A reply made and recorded whose sending breaks is not replaced by an apology: the
    entry stays answered with that reply, nothing is sent meanwhile, and the next start's
    `recover` sends the same reply and marks the entry done."""
    from structlog.testing import capture_logs

    sent: list[str] = []
    app = await make_app(ScriptedChatModel())
    app.handler.register("telegram", _SendFailsOnce(sent))
    with capture_logs() as logs:
        replies = await asyncio.wait_for(
            app.handler.handle(inbound("telegram:64", "hola", ext="send-1")), SETTLE_S
        )
        await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    assert replies == []
    assert sent == []
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["reply_undelivered"]
    entry = await app.store.inbox_get("telegram:64", "send-1")
    assert entry is not None
    assert entry.status == "answered"
    recorded = list(entry.replies)
    assert recorded
    assert recorded != [t("es", "error_generic")]
    assert await app.handler.recover() == 1
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    await until_sent(sent)
    await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    assert sent == recorded
    entry = await app.store.inbox_get("telegram:64", "send-1")
    assert entry is not None
    assert entry.status == "done"


async def test_an_unexpected_failure_is_logged_without_the_message(make_app: MakeApp) -> None:
    """`turn_failed` at error, with the exception's class; the message text is not in it."""
    from structlog.testing import capture_logs

    sent: list[str] = []
    app = await _app(make_app, sent)
    with capture_logs() as logs:
        await asyncio.wait_for(
            app.handler.handle(inbound("telegram:63", "veneno", ext="log-1")), SETTLE_S
        )
        await asyncio.wait_for(app.handler.drain(), SETTLE_S)
    failed = [e for e in logs if e["event"] == "turn_failed"]
    assert len(failed) == 1
    assert failed[0]["log_level"] == "error"
    assert failed[0]["error"] == "RuntimeError"
    above_debug = [e for e in logs if e["log_level"] != "debug"]
    assert "veneno" not in repr(above_debug)
