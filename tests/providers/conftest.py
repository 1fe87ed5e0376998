"""Fixtures for provider tests; the fakes themselves live in `fakes.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.provider_api import FakeAPI, MakeAPI, RecordingSleep, Step


@pytest.fixture
async def fake_api() -> AsyncIterator[MakeAPI]:
    """Make scripted endpoints; at teardown, close them and fail on any stray request."""
    made: list[FakeAPI] = []

    def make(method: str, path: str, *script: Step) -> FakeAPI:
        made.append(FakeAPI(method, path, script))
        return made[-1]

    yield make
    for api in made:
        await api.client.aclose()
    stray = [line for api in made for line in api.unexpected]
    assert not stray, f"unexpected requests: {stray}"


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()
