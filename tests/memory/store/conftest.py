"""Store backends under test. A second backend adds a factory here and runs the same suite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memory.store import Store
from memory.store.sqlite.store import SQLiteStore

Factory = Callable[[Path], Awaitable[Store]]


async def _sqlite_file(tmp: Path) -> Store:
    return await SQLiteStore.open(tmp / "store.db")


async def _sqlite_memory(_tmp: Path) -> Store:
    return await SQLiteStore.open(":memory:")


# "postgres" comes with its backend: a factory here, and the whole suite runs on it.
BACKENDS: dict[str, Factory] = {"sqlite": _sqlite_file, "sqlite-memory": _sqlite_memory}


@pytest.fixture(params=list(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    backend = await BACKENDS[request.param](tmp_path)
    yield backend
    await backend.close()
