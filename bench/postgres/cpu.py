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
    """The server's CPU seconds so far: the postmaster, its reaped and live children."""
    own = _fields(postmaster)
    if own is None:
        return 0.0
    ticks = sum(int(v) for v in own[11:15])  # utime stime cutime cstime
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _fields(int(entry.name))
        if fields and int(fields[1]) == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICK


def postmaster_of(url: str) -> int | None:
    """The pid of the server behind `url` when it runs on this machine (else None)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    backend = int(row[0]) if row else 0
    parent = parent_of(backend) if backend else None
    if parent is None:  # not a pid of this machine: the server runs elsewhere
        return None
    try:
        name = Path(f"/proc/{parent}/comm").read_text()
    except OSError:
        return None
    return parent if name.startswith("postgres") else None
