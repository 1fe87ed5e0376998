"""Fixtures of the bot tests: the command-line ones call `main` in-process."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture
def logging_restored() -> Iterator[None]:
    """`main` configures logging onto the streams a test captures: put it back afterwards
    (a later test's turn would log into a closed capture)."""
    saved, root = structlog.get_config(), logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)
