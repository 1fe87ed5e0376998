"""The PostgreSQL server's CPU read from `/proc` (`bench.postgres.cpu`)."""

from __future__ import annotations

import os

import pytest

from bench.postgres import cpu

TICK = os.sysconf("SC_CLK_TCK")


def _stat(utime: int, stime: int, cutime: int = 0, cstime: int = 0) -> list[str]:
    """The fields after the command name, as `_fields` returns them (ppid is field 1)."""
    return ["S", "1", *["0"] * 9, str(utime), str(stime), str(cutime), str(cstime)]


def test_a_child_reaped_mid_read_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend reaped between the children's scan and the postmaster's read is read
    again: its ticks count once (in the postmaster's cutime), never zero times."""
    # child 2 (7 ticks) is alive at the first scan, reaped before the second one; the
    # postmaster's first read does not yet hold it, its second does.
    scans = iter([{1: 5, 2: 7}, {1: 5}, {1: 5}, {1: 5}])
    reads = iter([_stat(10, 0), _stat(10, 0, cutime=7)])
    monkeypatch.setattr(cpu, "_children", lambda pid: next(scans))
    monkeypatch.setattr(cpu, "_fields", lambda pid: next(reads))
    assert cpu.server_cpu_s(100) == pytest.approx((10 + 7 + 5) / TICK)


def test_a_stable_read_sums_the_postmaster_and_its_live_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing reaped: the postmaster's own and reaped time plus each live child's."""
    monkeypatch.setattr(cpu, "_children", lambda pid: {1: 5, 2: 7})
    monkeypatch.setattr(cpu, "_fields", lambda pid: _stat(3, 2, 4, 1))
    assert cpu.server_cpu_s(100) == pytest.approx((3 + 2 + 4 + 1 + 5 + 7) / TICK)


def test_this_process_children_are_read_from_proc() -> None:
    """`_children` of a real pid reads `/proc`: this test's own process has a parent."""
    parent = os.getppid()
    assert os.getpid() in cpu._children(parent)


def test_the_postmaster_is_read_while_the_backend_is_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The backend's parent is read before its connection closes: a loaded machine reaps a
    closed backend at once, and the server then read as remote (its CPU as 0.00 ms)."""
    open_connections: list[bool] = []

    class Connection:
        def __enter__(self) -> Connection:
            open_connections.append(True)
            return self

        def __exit__(self, *exc: object) -> None:
            open_connections[-1] = False

        def execute(self, sql: str) -> Connection:
            return self

        def fetchone(self) -> tuple[int]:
            return (4321,)

    def parent_of(pid: int) -> int | None:
        return 77 if pid == 4321 and open_connections[-1] else None

    monkeypatch.setattr(cpu.psycopg, "connect", lambda url, autocommit: Connection())
    monkeypatch.setattr(cpu, "parent_of", parent_of)
    monkeypatch.setattr(cpu, "_command", lambda pid: "postgres\n" if pid == 77 else "")
    assert cpu.postmaster_of("postgresql://x") == 77
