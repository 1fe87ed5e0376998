"""Store backends under test: the contract suite runs on each (invariant 12).

`postgres` runs on a throwaway server started once per test session (a fresh database
per test); the server is started only when a PostgreSQL test runs, and a server that
cannot start fails those tests, never skips them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memory.store import Store
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore
from tests.support.postgres import postgres_empty_url, postgres_server, postgres_url

__all__ = [
    "postgres_empty_url",
    "postgres_server",
    "postgres_url",
]  # fixtures, shared with this folder's tests

Factory = Callable[[pytest.FixtureRequest, Path], Awaitable[Store]]


async def _sqlite_file(_request: pytest.FixtureRequest, tmp: Path) -> Store:
    return await SQLiteStore.open(tmp / "store.db")


async def _sqlite_memory(_request: pytest.FixtureRequest, _tmp: Path) -> Store:
    return await SQLiteStore.open(":memory:")


async def _postgres(request: pytest.FixtureRequest, _tmp: Path) -> Store:
    return await PostgresStore.open(request.getfixturevalue("postgres_url"), pool_size=4)


BACKENDS: dict[str, Factory] = {
    "sqlite": _sqlite_file,
    "sqlite-memory": _sqlite_memory,
    "postgres": _postgres,
}


@pytest.fixture(params=list(BACKENDS))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    backend = await BACKENDS[request.param](request, tmp_path)
    yield backend
    await backend.close()
