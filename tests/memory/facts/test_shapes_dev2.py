"""Fact shapes the first half of a fresh written set (support_dev2) showed the guard lost."""

from __future__ import annotations

import pytest

from memory.facts import IDENTITY_KINDS, extract_facts
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.keyfacts import PRIORITY, render_fact, salient_facts
from memory.fold.summarizer import FoldInput
from memory.types import Exchange
from tests.memory.facts.test_numbers import kinds as _read


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a phone number followed by a comma or a full stop is still one
        ("me podeis llamar al 645 21 88 03, a partir de las 5", [("phone", "645 21 88 03")]),
        ("el fijo es 91 123 45 67.", [("phone", "91 123 45 67")]),
        # a time read off a record keeps its zone
        (  # a capitalised word inside a sentence reads as a name
            "it says Released 11/04/2026 09:40 PST",
            [("named", "Released"), ("date", "11/04/2026"), ("time", "09:40 PST")],
        ),
        ("the call is at 14:00 CET", [("time", "14:00 CET")]),
        # capitals and grouped digits, seven or more
        ("un momento que lo busco... MV 2026 04418", [("id", "MV 2026 04418")]),
        ("the reference is MV 2026 04418.", [("id", "MV 2026 04418")]),
        # a version with its "v" or after its label
        ("pone v2.14.3. se actualizo sola", [("version", "v2.14.3")]),
        ("the firmware 3.2.1 is the latest", [("version", "3.2.1")]),
        # a SWIFT/BIC where the text names it
        ("and the SWIFT for international? it's BSCHESMMXXX", [("bic", "BSCHESMMXXX")]),
        ("BIC: NWBKGB2L", [("bic", "NWBKGB2L")]),
        # a handle, or a line that is one
        ("marta_codes", [("username", "marta_codes")]),
        ("lucia.design", [("username", "lucia.design")]),
        ("mi usuario en insta es @lucia_dz", [("username", "@lucia_dz")]),
        ("vale, te lo paso\nmarta_codes", [("username", "marta_codes")]),
        # an invoice of a series, its year and number after a slash
        ("la factura F-2026/0147 sale dos veces", [("id", "F-2026/0147")]),
        ("la serie F-2026/ va aparte", [("id", "F-2026")]),  # no number, no slash
        # a Spanish address's door or floor written out
        (
            "es avenida del Puerto 62, pta 9, 46023 Valencia",
            [("address", "avenida del Puerto 62, pta 9, 46023 Valencia")],
        ),
        (
            "calle Colón 5, piso 2, esc. B, 46004 Valencia",
            [("address", "calle Colón 5, piso 2, esc. B, 46004 Valencia")],
        ),
    ],
)
def test_a_shape_is_read(text: str, expected: list[tuple[str, str]]) -> None:
    """Each shape reads as its kind, with its whole value."""
    assert _read(text) == expected


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("tengo 3,5 kg y 2.5 litros", "version"),  # decimals are no version
        ("PIN 1234 5678", "id"),  # a label's value is no reference of capitals and digits
        ("AB 12 34", "id"),  # too few digits for a grouped reference
        ("ATENCIONES swift", "bic"),  # no country where a BIC has it
        ("NWBKGB2L", "bic"),  # a BIC-shaped word in a text that does not name one
        ("informe.pdf", "username"),  # a file, not a handle
        ("ok. gracias.", "username"),
        ("v2", "username"),  # one letter and a digit: no handle
        ("v2", "version"),  # and no version without a dot
    ],
)
def test_no_fact_of_the_kind_where_the_shape_does_not_hold(text: str, kind: str) -> None:
    """Near misses of each shape do not read as its kind."""
    assert kind not in {k for k, _ in _read(text)}


@pytest.mark.parametrize(
    "text",
    [
        "marta_codes",
        "the SWIFT is BSCHESMMXXX",
        "pone v2.14.3",
        "la version 2.14",
        "MV 2026 04418",
        "Released 09:40 PST",
        "al 645 21 88 03, gracias",
        "la factura F-2026/0147",
        "avenida del Puerto 62, pta 9, 46023 Valencia",
    ],
)
def test_each_new_shape_round_trips_its_key_facts_line(text: str) -> None:
    """A key-facts line reads back as the same fact, or the next fold would lose it."""
    (fact,) = extract_facts(text)
    assert extract_facts(render_fact(fact)) == [fact]


def test_the_new_kinds_are_ranked_and_the_user_ones_are_identity() -> None:
    """A handle and a bank's code are who the user is; a version is state."""
    assert {"username", "bic", "version"} <= set(PRIORITY)
    assert {"username", "bic"} <= IDENTITY_KINDS
    assert "version" not in IDENTITY_KINDS


def test_a_zoned_time_is_never_routine() -> None:
    """A time with its zone earns a key-facts line; a plain one said in passing does not."""
    assert [f.value for f in salient_facts("the page says 09:40 PST")] == ["09:40 PST"]
    assert salient_facts("lo probe a las 14:30") == []


def test_the_offline_summary_keeps_a_username_given_alone() -> None:
    """A username the user answered with survives folds of unrelated talk."""
    users = ["marta_codes"] + [f"and about the payout, point {n} of many" for n in range(30)]
    exchanges = [
        Exchange(n, 1, user, "Thanks, noted.", created_at=None) for n, user in enumerate(users, 1)
    ]
    summary = ExtractiveSummarizer().summary(
        FoldInput("", exchanges, language="en", max_tokens=200)
    )
    assert "marta_codes" in summary


def test_a_floor_word_is_whole_before_its_number_or_letter() -> None:
    """ "pisos altos" is no floor: the address stops at its street number."""
    assert _read("calle Mayor 3, pisos altos") == [("address", "calle Mayor 3")]
