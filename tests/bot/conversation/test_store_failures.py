"""Turns the database failed: tried again, never answered twice, apologised for."""

from __future__ import annotations

from typing import Any

from bot.conversation.texts import t
from tests.bot.conversation.conftest import Collect, MakeApp, inbound, until_sent
from tests.support.fakes import ScriptedChatModel


async def test_a_turn_the_database_failed_is_retried_once_it_is_back(make_app: MakeApp) -> None:
    """The exchange's write fails twice (disk I/O error) after the intake committed: the
    turn is tried again shortly after, and the user gets one reply, once; /healthz is the
    store's own `ping` meanwhile."""
    import sqlite3

    model = ScriptedChatModel()
    app = await make_app(model)
    app.handler.store_retry_s = (0.01, 0.01, 0.01)
    sent: list[str] = []
    app.handler.register("telegram", Collect(sent))
    record = app.store.record_exchange
    failures = [sqlite3.OperationalError("disk I/O error")] * 2

    async def flaky(new: Any) -> Any:
        if failures:
            raise failures.pop()
        return await record(new)

    app.store.record_exchange = flaky  # type: ignore[method-assign]
    app.engine.store.record_exchange = flaky  # type: ignore[method-assign]
    assert await app.handler.handle(inbound("telegram:50", "hola", ext="disk-1")) == []
    await until_sent(sent, 200)
    await app.handler.drain()
    assert len(sent) == 1  # answered once the store took the write, and only once
    entry = await app.store.inbox_get("telegram:50", "disk-1")
    assert entry is not None
    assert entry.status in ("answered", "done")
    assert len(await app.store.all_exchanges("telegram:50")) == 1


async def test_a_store_that_stays_down_gets_an_apology_and_the_turn_waits(
    make_app: MakeApp,
) -> None:
    """Past the retries the user is told the message is kept; the entry stays unfinished
    in the inbox, and the next start (`recover`) answers it."""
    import sqlite3

    model = ScriptedChatModel()
    app = await make_app(model)
    app.handler.store_retry_s = (0.01, 0.01)
    sent: list[str] = []
    app.handler.register("telegram", Collect(sent))
    record = app.store.record_exchange

    async def down(new: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    app.engine.store.record_exchange = down  # type: ignore[method-assign]
    await app.handler.handle(inbound("telegram:51", "hola", ext="full-1"))
    await until_sent(sent)
    assert sent == [t("es", "error_store")]
    entry = await app.store.inbox_get("telegram:51", "full-1")
    assert entry is not None
    assert entry.status == "pending"
    app.engine.store.record_exchange = record  # type: ignore[method-assign]
    assert await app.handler.recover() == 1
    await app.handler.drain()
    assert len(sent) == 2  # the answer, at last
    assert len(await app.store.all_exchanges("telegram:51")) == 1
