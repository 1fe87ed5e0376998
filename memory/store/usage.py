"""The usage port: what `ventana usage` and `/usage` read. A backend may or may not
offer it (`isinstance(store, UsageQueries)`); one that does stores the provider-reported
usage of each chat call with its exchange and of each fold with its summary version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class UsageTotal:
    """Provider-reported usage of one key, purpose (`chat`, `fold`) and model."""

    key: str
    purpose: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    first_at: datetime
    last_at: datetime


@runtime_checkable
class UsageQueries(Protocol):
    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        """Calls and tokens per key, purpose and model, oldest key first; `since` inclusive."""
        ...
