"""Recall runs on every store backend: `recall_store` is one of `tests/memory/store`'s
backends (sqlite, sqlite-memory, postgres), so the same planted facts, queries and
expected hits pin the index on each. SQLite runs twice: searching its recently searched
keys in memory (`memory.recall.hot`, what it does by default) and on disk (FTS5), as it
does for a key too large to hold."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

import pytest

from memory.recall.hot import HotKeys
from memory.recall.port import RecallIndex
from memory.store import Store
from memory.store.sqlite.store import SQLiteStore
from tests.memory.store.conftest import BACKENDS
from tests.support.postgres import postgres_empty_url, postgres_server, postgres_url

__all__ = ["postgres_empty_url", "postgres_server", "postgres_url"]  # shared fixtures


class RecallStore(Store, RecallIndex, Protocol):
    """A store with its own recall index, as the engine finds it."""


@pytest.fixture(params=[*BACKENDS, "sqlite-on-disk"])
async def recall_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[RecallStore]:
    """A fresh store of each backend (ids start at 1 on every one), with recall."""
    on_disk = request.param == "sqlite-on-disk"
    backend = await BACKENDS["sqlite" if on_disk else request.param](request, tmp_path)
    if on_disk:
        assert isinstance(backend, SQLiteStore)
        backend.hot = HotKeys(max_terms=0)  # holds nothing: every search reads FTS5
    assert isinstance(backend, RecallIndex)  # what the engine's `_recall_of` checks
    yield backend
    await backend.close()
