"""Which backend a `VENTANA_DB` value names, and opening it: the one place that decides.

A `postgresql://` or `postgres://` URL is PostgreSQL; anything else is a SQLite file
(`":memory:"` an in-memory database). `config.settings` refuses other URLs up front.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal, overload

from memory.store import Store
from memory.store.postgres.operator import where as postgres_where
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.connection import Sync
from memory.store.sqlite.store import SQLiteStore

SCHEMES = ("postgresql://", "postgres://")


def is_postgres(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(SCHEMES)


def where(target: str | Path) -> str:
    """The backend and its place, for a message when it cannot be opened: no password."""
    if is_postgres(target):
        try:
            return f"postgresql {postgres_where(str(target))}"
        except Exception:  # an unparsable URL is named only by its backend
            return "postgresql"
    return f"sqlite {target}"


@overload
async def open_store(
    target: str | Path,
    *,
    must_exist: Literal[False] = False,
    pool_size: int = ...,
    sync: Sync = ...,
) -> Store: ...


@overload
async def open_store(
    target: str | Path, *, must_exist: bool, pool_size: int = ..., sync: Sync = ...
) -> Store | None: ...


async def open_store(
    target: str | Path, *, must_exist: bool = False, pool_size: int = 16, sync: Sync = "normal"
) -> Store | None:
    """The store `target` names, migrated. With `must_exist`, None for a SQLite file that
    is not there (operator views never create one); a server is always there.
    `pool_size` is PostgreSQL's, `sync` SQLite's `synchronous`."""
    if is_postgres(target):
        return await PostgresStore.open(str(target), pool_size=pool_size)
    if must_exist and not await exists(target):
        return None
    return await SQLiteStore.open(target, sync=sync)


async def exists(target: str | Path) -> bool:
    """Whether the database `target` names is there to open, without creating it: a
    server (and `:memory:`) always is, a SQLite file when the file exists."""
    if is_postgres(target) or str(target) == ":memory:":
        return True
    return await asyncio.to_thread(_is_file, target)


def _is_file(target: str | Path) -> bool:
    return Path(target).is_file()
