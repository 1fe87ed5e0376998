"""The store ports, one per caller: `TurnStore` (the turn), `SummaryStore` (fold-in),
`EpisodeStore` (reset, undo, forget), `OperatorQueries` (CLI and ops views),
`DeliveryInbox` (intake and delivery marks), `ChatLocks` (one chat at a time) and
`UsageQueries`; one package per backend (`sqlite/`, `postgres/`), opened by
`open.open_store`."""

from __future__ import annotations

from typing import Protocol

from memory.recall.port import RecallIndex
from memory.store.episodes import EpisodeStore
from memory.store.inbox import DeliveryInbox
from memory.store.locks import ChatLocks
from memory.store.operator import OperatorQueries
from memory.store.summaries import SummaryStore
from memory.store.turns import TurnStore
from memory.store.usage import UsageQueries


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
