"""The store ports, one per caller: `TurnStore` (the turn), `SummaryStore` (fold-in),
`EpisodeStore` (reset, undo, forget), `OperatorQueries` (CLI and ops views),
`DeliveryInbox` (intake and delivery marks), `ChatLocks` (one chat at a time) and
`UsageQueries`; one package per backend (`sqlite/`, `postgres/`), opened by
`open.open_store`."""

from __future__ import annotations

import sqlite3
from typing import Protocol

from memory.recall.port import RecallIndex
from memory.store.episodes import EpisodeStore
from memory.store.inbox import DeliveryInbox
from memory.store.locks import ChatLocks
from memory.store.operator import OperatorQueries
from memory.store.summaries import SummaryStore
from memory.store.turns import TurnStore
from memory.store.usage import UsageQueries


class StoreUnavailable(RuntimeError):
    """The database cannot be used at all (not a database, corrupt, unreadable): said
    once, clearly, instead of a traceback (`ventana` then exits non-zero)."""


def is_store_error(exc: BaseException) -> bool:
    """A failure of the database itself that may pass (down, restarting, disk full or
    I/O error, locked past the busy timeout, no pooled connection in time), as either
    backend raises it: worth trying the turn again once the store is back. A bug (a
    constraint violated, bad SQL) is not one."""
    if isinstance(exc, sqlite3.OperationalError):
        return True
    try:
        import psycopg
        import psycopg_pool
    except ImportError:  # pragma: no cover - both are dependencies
        return False
    return isinstance(exc, psycopg.OperationalError | psycopg_pool.PoolTimeout)


class Store(
    TurnStore,
    SummaryStore,
    EpisodeStore,
    OperatorQueries,
    DeliveryInbox,
    ChatLocks,
    UsageQueries,
    RecallIndex,
    Protocol,
):
    """Every port on one backend, for the app's wiring: a turn's exchange and its inbox
    entry's "answered" mark commit in one transaction."""

    async def close(self) -> None: ...
