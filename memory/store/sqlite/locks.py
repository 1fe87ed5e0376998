"""`ChatLocks` on SQLite: one process owns a SQLite file, so its chat queue already
orders each chat; the claim is the entry alone, and exclusive."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memory.store.locks import Claim
from memory.types import InboxEntry


class SQLiteChatLocks:
    """The chat lock part of `SQLiteStore`."""

    @asynccontextmanager
    async def claim_turn(self, entry: InboxEntry) -> AsyncIterator[Claim]:
        """One process owns a SQLite file: the chat queue already orders the chat."""
        yield Claim((entry,), exclusive=True)
