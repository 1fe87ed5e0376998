"""A turn's trips to SQLite through the handler: two write transactions (the intake, made
durable before the model is called, and the exchange with its recall index row, its
usage row and its inbox entry's "answered" mark); the "done" mark of a delivered reply
rides with the next write; the turn's state and recall need no read of their own."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

import memory.store.sqlite.connection as connection
from memory.store.sqlite.store import SQLiteStore
from tests.bot.conversation.conftest import MakeApp, inbound

TEXTS = [
    "Hola, mi pedido #4821 no llegó",
    "Lo pedí el 3 de marzo a Calle Mayor 12",
    "¿Pueden mirar el envío del pedido #4821?",
    "El repartidor dijo que no había nadie",
    "Gracias, espero la respuesta",
]


def _name(fn: Callable[..., Any]) -> str:
    return fn.func.__name__ if isinstance(fn, partial) else getattr(fn, "__name__", "?")


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Each round trip to a connection's thread from now on: the names of the units of
    work of a write batch, or `["read:<fn>"]`."""
    seen: list[list[str]] = []
    on_thread = connection._on_thread

    async def counting(db: Any, fn: Any) -> Any:
        if isinstance(fn, partial) and fn.func is connection._in_batch:
            seen.append([_name(unit) for unit in fn.args[0]])
        else:
            seen.append([f"read:{_name(fn)}"])
        return await on_thread(db, fn)

    monkeypatch.setattr(connection, "_on_thread", counting)
    return seen


async def test_a_turn_is_two_write_transactions_and_no_read(
    make_app: MakeApp, trips: list[list[str]]
) -> None:
    """After a chat's first turn, each turn writes twice and reads nothing: the intake
    (carrying the previous reply's done mark) and the exchange with everything of it."""
    app = await make_app(fold_batch=100, window_exchanges=1)  # no fold writes in between
    for text in ("Buenas", "Tengo un problema con un pedido", "Es el pedido #4821"):
        await app.handler.handle(inbound("telegram:61", text))
    assert isinstance(app.store, SQLiteStore)
    await app.store.recall_held()  # the key's recall index is in memory from now on
    trips.clear()
    for text in TEXTS:
        assert await app.handler.handle(inbound("telegram:61", text))
    assert trips == [["inbox_mark", "begin_turn"], ["insert_exchange"]] * len(TEXTS)
    await app.handler.drain()  # the last done mark, alone once nothing else is written
    assert trips[-1] == ["inbox_mark"]
    assert await app.store.inbox_unfinished() == []
