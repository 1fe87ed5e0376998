"""Shortcuts in the extractive summarizer answer as the plain computation would."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory.fold.extractive import _RESTATED_MIN_WORDS, _RESTATED_SHARE, _restates
from memory.fold.summarizer import required_facts
from memory.types import Exchange

_bags = st.frozensets(st.sampled_from([f"w{i}" for i in range(24)]), max_size=20)


@given(_bags, _bags)
def test_restates_answers_as_the_share_of_shared_words(
    a: frozenset[str], b: frozenset[str]
) -> None:
    big_enough = len(a) >= _RESTATED_MIN_WORDS and len(b) >= _RESTATED_MIN_WORDS
    assert _restates(a, b) == (big_enough and len(a & b) >= _RESTATED_SHARE * len(a | b))


def test_cached_required_facts_come_as_a_new_list_each_time() -> None:
    exchanges = [Exchange(1, 1, "Pedido #PED-48213 del 3 de marzo", "Veo 1.250,50 €")]
    first = required_facts("Datos clave:\n- ref 4821", exchanges)
    first.clear()
    again = required_facts("Datos clave:\n- ref 4821", exchanges)
    assert [f.value for f in again] == ["4821", "#PED-48213", "3 de marzo", "1.250,50 €"]
