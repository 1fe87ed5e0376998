"""Shaping the message list into strictly alternating, non-blank turns."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from providers.base import Message
from providers.sdk import alternate

messages = st.lists(
    st.builds(Message, st.sampled_from(["user", "assistant"]), st.text(max_size=20)), max_size=12
)


def test_merges_neighbours_and_drops_blanks() -> None:
    """Same-role neighbours join with a blank line; blank messages vanish."""
    given_turns = [
        Message("user", "hola"),
        Message("assistant", "  "),
        Message("user", "¿estás?"),
        Message("assistant", "sí"),
    ]
    assert alternate(given_turns) == (
        Message("user", "hola\n\n¿estás?"),
        Message("assistant", "sí"),
    )


@given(messages)
def test_result_alternates_and_keeps_every_word(turns: list[Message]) -> None:
    """No two neighbours share a role, nothing is blank, and no word is lost."""
    shaped = alternate(turns)
    assert all(a.role != b.role for a, b in pairwise(shaped))
    assert all(m.content.strip() for m in shaped)
    kept = [m.content for m in turns if m.content.strip()]
    assert " ".join(m.content for m in shaped).split() == " ".join(kept).split()
