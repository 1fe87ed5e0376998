"""Store backends under test. A second backend adds a factory here and runs the same suite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memory.store.sqlite.store import SQLiteStore

Factory = Callable[[Path], Awaitable[SQLiteStore]]


async def _sqlite_file(tmp: Path) -> SQLiteStore:
    return await SQLiteStore.open(tmp / "store.db")


async def _sqlite_memory(_tmp: Path) -> SQLiteStore:
    return await SQLiteStore.open(":memory:")


BACKENDS: dict[str, Factory] = {"sqlite-file": _sqlite_file, "sqlite-memory": _sqlite_memory}


@pytest.fixture(params=sorted(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    backend = await BACKENDS[request.param](tmp_path)
    yield backend
    await backend.close()
