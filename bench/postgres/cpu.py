"""CPU seconds from `/proc` (Linux): a PostgreSQL server's, backends included.

A backend's CPU is its own while it runs, and its postmaster's (`cutime`/`cstime`) once
it has exited and been reaped, so the server's total over a span is the postmaster's
self and reaped-children time plus every live child's time, read before and after.
"""

from __future__ import annotations

import os
from pathlib import Path

import psycopg

_TICK = os.sysconf("SC_CLK_TCK")


def _fields(pid: int) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command name (field 3 onwards)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def parent_of(pid: int) -> int | None:
    fields = _fields(pid)
    return int(fields[1]) if fields else None


def server_cpu_s(postmaster: int) -> float:
    """The server's CPU seconds so far: the postmaster, its reaped and live children.

    A child reaped between reading the postmaster and scanning its children would be
    counted in neither, so the read is taken again until the set of live children is
    the same on both sides of the postmaster's read (a loaded machine reaps mid-read)."""
    ticks = 0
    for _ in range(20):
        before = _children(postmaster)
        own = _fields(postmaster)
        if own is None:
            return 0.0
        after = _children(postmaster)
        ticks = sum(int(v) for v in own[11:15]) + sum(after.values())  # utime stime cutime cstime
        if before.keys() == after.keys():
            break
    return ticks / _TICK


def process_cpu_s(pid: int) -> float:
    """One live process's own CPU seconds so far (utime + stime); 0.0 once it is gone."""
    fields = _fields(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK if fields else 0.0


def _children(postmaster: int) -> dict[int, int]:
    """Each live child's pid and its own CPU ticks (utime + stime)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _fields(int(entry.name))
        if fields and int(fields[1]) == postmaster:
            out[int(entry.name)] = int(fields[11]) + int(fields[12])
    return out


def postmaster_of(url: str) -> int | None:
    """The pid of the server behind `url` when it runs on this machine (else None)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        backend = int(row[0]) if row else 0
        # read while the connection holds the backend: once closed, a loaded machine may
        # have reaped it, and the server would read as remote (its CPU as 0)
        parent = parent_of(backend) if backend else None
    if parent is None:  # not a pid of this machine: the server runs elsewhere
        return None
    return parent if _command(parent).startswith("postgres") else None


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""
