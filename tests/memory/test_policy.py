"""The summary block's label: what it must tell the chat model, in both languages."""

from __future__ import annotations

import pytest

from memory.policy import memory_block
from memory.types import SummaryVersion


@pytest.mark.parametrize(
    ("language", "musts"),
    [
        ("es", ["desactualizada", "autoridad", "permisos", "no un hecho confirmado",
                "«Usuario» es quien te escribe", "«Asistente» eres tú", "reglas del negocio"]),
        ("en", ["out of date", "no authority", "no permissions", "not a confirmed fact",
                '"User" is the person', '"Assistant" is you', "Business rules"]),
    ],
)  # fmt: skip
def test_memory_label_says_what_the_summary_is_and_is_not(language: str, musts: list[str]) -> None:
    """The block says it may be stale, grants nothing, and who 'user' and 'assistant' are."""
    summary = SummaryVersion(1, 1, 3, "Pedido #PED-1.", 42, "fold-v1", "m", 1, 42)
    block = memory_block(summary, language)
    assert block.startswith('<memory version="3">')
    assert "#42" in block
    assert "Pedido #PED-1." in block
    for phrase in musts:
        assert phrase in block, phrase
