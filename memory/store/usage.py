"""The usage port: what `ventana usage` and `/usage` read. A backend may or may not
offer it (`isinstance(store, UsageQueries)`); one that does stores the provider-reported
usage of each chat call with its exchange and of each fold with its summary version."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable


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

    @classmethod
    def of_row(cls, row: Mapping[str, Any], when: Callable[[Any], datetime]) -> UsageTotal:
        """A totals row read by column name; `when` turns its stored times into datetimes."""
        return cls(
            key=row["key"],
            purpose=row["purpose"],
            model=row["model"],
            calls=int(row["calls"]),
            input_tokens=int(row["input_tokens"]),
            output_tokens=int(row["output_tokens"]),
            cached_tokens=int(row["cached_tokens"]),
            first_at=when(row["first_at"]),
            last_at=when(row["last_at"]),
        )


@runtime_checkable
class UsageQueries(Protocol):
    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        """Calls and tokens per key, purpose and model, oldest key first; `since` inclusive."""
        ...
