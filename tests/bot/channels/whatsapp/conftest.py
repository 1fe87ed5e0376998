"""What every WhatsApp test shares: a clean environment and the fake Graph API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.whatsapp import FakeGraph, clear_env


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_env(monkeypatch, tmp_path)


@pytest.fixture
async def graph() -> AsyncIterator[FakeGraph]:
    """The fake Graph API; the test fails if it saw a request it did not expect."""
    fake = FakeGraph()
    yield fake
    await fake.client.aclose()
    assert fake.unexpected == []
