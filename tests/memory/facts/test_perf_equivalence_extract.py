"""Fixed cases the gated extraction (literal-led gates, lowered start words) must answer
exactly as the ungated original did; the expected facts were recorded with it."""

import pytest

from memory.facts import facts_of

CASES = [
    ("Pedido nº 48213 y caso 12-AB", [("id", "48213"), ("id", "12-AB")]),
    ("CASO: 7781, Póliza 5521-X", [("id", "7781"), ("id", "5521-X")]),
    ("ıd ticket 12345 ſ", [("id", "12345")]),
    ("İnvoice 4471-22", [("id", "4471-22")]),
    (
        "xcp 28028 y C.P. 08001, zip code: 94105",
        [("number", "28028"), ("postcode", "08001"), ("postcode", "94105")],
    ),
    ("código postal\n28028", [("postcode", "28028")]),
    ("el 15 de\njulio de 2024", [("date", "15 de\njulio de 2024")]),
    ("Ref #A-5521.", [("id", "#A-5521")]),
    (
        "ORDER-731 / TRK5590X / AB-12-CD",
        [("id", "ORDER-731"), ("id", "TRK5590X"), ("id", "AB-12-CD")],
    ),
    (
        "2024-03-05 10:30 pm, 5/3/2024",
        [("date", "2024-03-05"), ("time", "10:30 pm"), ("date", "5/3/2024")],
    ),
    ("ticketless 123 ticket\n 99-1", [("id", "99-1")]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_extract_matches_the_original(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(f.kind, f.value) for f in facts_of.__wrapped__(text)] == expected
