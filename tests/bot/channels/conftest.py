"""Setup shared by the HTTP server tests (`test_http_*.py`): they opt in by name."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.whatsapp import clear_env


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No variable or `.env` of the developer's machine leaks into the test."""
    clear_env(monkeypatch, tmp_path)


@pytest.fixture
def port() -> int:
    """A loopback TCP port free at the time of asking."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
