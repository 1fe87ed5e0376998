"""Who the user is, from what they wrote: the facts an automatic reset may carry over.

Only the user's own words count (an assistant saying "soy Marta, de soporte" is not the
customer's name). Identity facts: the name and company they give for themselves, their
customer, account, policy or contract numbers, IBAN, and contact details (phone, email,
postal address). Case details (an order id, an amount, a server's IP) stay behind.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memory.facts.extract import Fact, dedupe, extract_facts

IDENTITY_CARRY_KINDS = (
    "name",
    "company",
    "account",
    "iban",
    "phone",
    "email",
    "address",
    "postcode",
)


class _HasUserText(Protocol):
    @property
    def user_text(self) -> str: ...


def identity_facts(sources: Iterable[str | _HasUserText]) -> list[Fact]:
    """The user's identity facts in `sources` (user texts, or exchanges whose user side is
    read), without repeats, ordered by kind (name first). Within a kind given several
    times (a new phone), the latest mention comes first: the one most likely still true."""
    found: list[Fact] = []
    for source in sources:
        text = source if isinstance(source, str) else source.user_text
        found += [f for f in extract_facts(text) if f.kind in IDENTITY_CARRY_KINDS]
    latest_first = dedupe(reversed(found))
    order = {kind: i for i, kind in enumerate(IDENTITY_CARRY_KINDS)}
    position = {id(f): i for i, f in enumerate(latest_first)}
    return sorted(latest_first, key=lambda f: (order[f.kind], position[id(f)]))
