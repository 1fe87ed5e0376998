"""A throwaway PostgreSQL server for the tests: one per test session, on 127.0.0.1.

`initdb` refuses to run as root, so the cluster is created and run as the `postgres`
user in a temporary folder (its socket there too), on a free port, listening on the
loopback only. If the server cannot start the tests that need it FAIL with the log's
tail: PostgreSQL tests are never skipped silently.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

_DEFAULT_BINDIR = "/usr/lib/postgresql/15/bin"
_counter = itertools.count(1)


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database; its URL."""
        name = f"{prefix}_{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def emptied(self, database: str) -> str:
        """`database` (migrated) with every row deleted and ids restarted: its URL.
        Far quicker than a new database per test (a copy costs most of a second)."""
        url = self.url(database)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {', '.join(_TABLES)} RESTART IDENTITY CASCADE")
        return url


def _bindir() -> Path:
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return Path(_DEFAULT_BINDIR)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(*argv: str) -> list[str]:
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        return ["runuser", "-u", "postgres", "--", *argv]
    return list(argv)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _fail(what: str, proc: subprocess.CompletedProcess[str] | None, log: Path) -> None:
    detail = f"{proc.stdout}\n{proc.stderr}" if proc is not None else ""
    pytest.fail(
        f"PostgreSQL test server could not {what}:\n{detail}\n--- log tail ---\n{_tail(log)}",
        pytrace=False,
    )


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:  # reported like a failed run
        return subprocess.CompletedProcess(argv, 127, "", repr(exc))


def start_server(bindir: Path | None = None) -> Iterator[PostgresServer]:
    """Start a cluster, yield it, stop it and delete its folder. `bindir` defaults to
    what `pg_config --bindir` says."""
    base = Path(tempfile.mkdtemp(prefix="ventana-pg-"))
    log = base / "log"
    try:
        if os.geteuid() == 0:
            shutil.chown(base, user="postgres")
        bindir = bindir or _bindir()
        init = _run(
            _as_postgres(
                str(bindir / "initdb"), "-D", str(base / "data"), "-A", "trust", "-U", "postgres"
            )
        )
        if init.returncode != 0:
            _fail("initdb", init, log)
        port = _free_port()
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {base} -c fsync=off"
        ctl = str(bindir / "pg_ctl")
        started = _run(
            _as_postgres(
                ctl, "-D", str(base / "data"), "-o", options, "-l", str(log), "start", "-w"
            )
        )
        if started.returncode != 0:
            _fail("start", started, log)
        try:
            yield PostgresServer("127.0.0.1", port, "postgres")
        finally:
            _run(_as_postgres(ctl, "-D", str(base / "data"), "-m", "immediate", "stop"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


MIGRATED = "ventana_test"
_TABLES = ("inbox", "summaries", "exchanges", "episodes", "sessions", "erased_deliveries")


async def _migrate(url: str) -> None:
    from memory.store.postgres.store import PostgresStore

    store = await PostgresStore.open(url, pool_size=1)
    await store.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the whole test session (fails, never skips),
    with a migrated template database the per-test databases are copied from."""
    for server in start_server():
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{MIGRATED}"')
        # On a thread of its own: this may be set up from inside a running event loop.
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, _migrate(server.url(MIGRATED))).result()
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The session's migrated database, emptied, for one test."""
    return postgres_server.emptied(MIGRATED)


@pytest.fixture
def postgres_empty_url(postgres_server: PostgresServer) -> str:
    """A fresh database with no schema at all (migration tests)."""
    return postgres_server.create_database()
