"""A bare number of four digits or more is a fact of its own ("it says 49106 now")."""

from __future__ import annotations

import pytest

from memory.facts import extract_facts
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.keyfacts import PRIORITY
from memory.fold.summarizer import FoldInput
from memory.types import Exchange


def kinds(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in extract_facts(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("just went downstairs. it says 49106 now", [("number", "49106")]),
        ("en la app todavía me sale 1500", [("number", "1500")]),
        ("ill send them for now. 04512", [("number", "04512")]),
        ("the meter E11Z049217 reads 48213", [("id", "E11Z049217"), ("number", "48213")]),
    ],
)
def test_a_bare_number_is_read(text: str, expected: list[tuple[str, str]]) -> None:
    """Four digits or more standing alone are a number fact, verbatim."""
    assert kinds(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my number is 0151 496 0288", [("phone", "0151 496 0288")]),
        ("£1234 paid", [("amount", "£1234")]),
        ("el fijo es 91 123 45 67", [("phone", "91 123 45 67")]),
        ("tel 976 41 22 85", [("phone", "976 41 22 85")]),
        ("reg KX19 ABC, a blue Golf", [("plate", "KX19 ABC"), ("named", "Golf")]),
        ("my IBAN GB29 NWBK 6016 1331 9268 19", [("iban", "GB29 NWBK 6016 1331 9268 19")]),
        ("order CMP-204417", [("id", "CMP-204417")]),
        ("moved here in 2026", []),  # a year
        ("it came to 1234.50 in the end", []),  # a decimal, not a reference
        ("3,412 files left", [("count", "3,412 files")]),  # how many, no reference
        ("Calle Alcalá 214, 28028 Madrid", [("address", "Calle Alcalá 214, 28028 Madrid")]),
    ],
)
def test_another_kind_or_no_fact_wins_over_a_bare_number(
    text: str, expected: list[tuple[str, str]]
) -> None:
    """A phone, amount, id or address on the same digits keeps its kind; years and decimals
    are no number fact."""
    assert kinds(text) == expected


def test_a_number_is_shed_before_ids_and_amounts() -> None:
    """When key facts must shrink, a bare number goes before amounts and identifiers."""
    assert PRIORITY["time"] < PRIORITY["number"] < PRIORITY["date"] < PRIORITY["amount"]


def test_the_offline_summary_keeps_a_reading_it_no_longer_quotes() -> None:
    """A meter reading said in passing survives folds: under key facts when no line says it."""
    exchanges = [
        Exchange(n, 1, user, "Thanks, noted.", created_at=None)
        for n, user in enumerate(
            ["just went downstairs. it says 49106 now"]
            + [f"and another thing about the tariff, number {n} of many" for n in range(30)],
            1,
        )
    ]
    request = FoldInput("", exchanges, language="en", max_tokens=200)
    summary = ExtractiveSummarizer().summary(request)
    assert "49106" in summary
