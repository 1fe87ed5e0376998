"""`memory.store.open`: the one place that decides which backend `VENTANA_DB` names,
and `describe()`, the line doctor prints about it."""

from __future__ import annotations

from pathlib import Path

from config.settings import POSTGRES_SCHEMES
from memory.store.open import SCHEMES, is_postgres, open_store, where
from memory.store.postgres.store import PostgresStore
from memory.store.sqlite.store import SQLiteStore


def test_settings_validate_the_schemes_open_store_opens() -> None:
    """The URL forms settings accept are exactly those `open_store` opens as PostgreSQL."""
    assert POSTGRES_SCHEMES == SCHEMES
    assert is_postgres("postgres://db/v")
    assert is_postgres("postgresql://db/v")
    assert not is_postgres(Path("postgres://not-a-url-when-a-path"))


def test_where_names_the_backend_and_never_the_password() -> None:
    """A place to name in an error: the backend, host and database, no credentials."""
    assert where("postgresql://ventana:s3cret@db.local:5432/memory") == (
        "postgresql db.local/memory"
    )
    assert where(Path("data/v.db")) == "sqlite data/v.db"


async def test_must_exist_never_creates_a_sqlite_file(tmp_path: Path) -> None:
    """An operator view on a file that is not there gets None, and no file appears."""
    assert await open_store(tmp_path / "none.db", must_exist=True) is None
    assert not (tmp_path / "none.db").exists()
    store = await open_store(":memory:", must_exist=True)
    assert isinstance(store, SQLiteStore)
    await store.close()


async def test_a_sqlite_store_describes_its_file_and_durability(tmp_path: Path) -> None:
    """describe(): the backend, the file, its migrations, WAL and `synchronous`."""
    store = await open_store(tmp_path / "d.db", sync="full")
    try:
        line = await store.describe()
    finally:
        await store.close()
    assert line.startswith(f"sqlite {tmp_path / 'd.db'} (")
    assert "WAL, synchronous=full" in line


async def test_a_postgres_store_describes_server_and_pool(postgres_url: str) -> None:
    """describe(): the backend, server version, host/database and pool, no password."""
    store = await open_store(postgres_url, pool_size=2)
    try:
        assert isinstance(store, PostgresStore)
        line = await store.describe()
    finally:
        await store.close()
    assert line.startswith("postgresql ")
    assert "pool 2/2 open" in line
    assert "@" not in line
