"""split_message: Telegram's 4096 UTF-16 unit limit, natural cuts, whole emoji."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.channels.split import split_message, utf16_len

FAMILY = "👨\u200d👩\u200d👧"
FLAG = "🇪🇸"
PIECES = ["😀", FAMILY, FLAG, "👍🏽", "1\ufe0f\u20e3", "e\u0301", " ", "\n", "\n\n", ". ", "語"]
texts = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(PIECES)), max_size=60).map(
    "".join
)


def visible(text: str) -> str:
    return "".join(text.split())


@settings(max_examples=300, deadline=None)
@given(text=texts, limit=st.integers(min_value=2, max_value=80))
def test_chunks_fit_keep_content_and_never_split_a_surrogate_pair(text: str, limit: int) -> None:
    """Every chunk fits the limit in UTF-16 units, content survives in order, no lone halves."""
    chunks = split_message(text, limit)
    assert all(0 < utf16_len(chunk) <= limit for chunk in chunks)
    assert visible("".join(chunks)) == visible(text)
    for chunk in chunks:
        chunk.encode("utf-16-le")  # strict: raises on a lone surrogate
        assert chunk == chunk.strip()


def test_short_text_is_one_chunk_and_blank_is_none() -> None:
    """A reply within the limit is sent as is; a blank one is not sent at all."""
    assert split_message("x" * 4096) == ["x" * 4096]
    assert split_message(" \n ") == []


def test_astral_characters_count_twice() -> None:
    """3000 emoji are 6000 UTF-16 units: two messages, each within 4096 units."""
    chunks = split_message("😀" * 3000)
    assert [utf16_len(c) for c in chunks] == [4096, 1904]


def test_prefers_paragraph_then_sentence_then_word() -> None:
    """The cut falls at a blank line when one keeps the chunk at least half full."""
    para = "First paragraph. " * 30
    text = para.strip() + "\n\n" + "Second one. " * 30
    chunks = split_message(text, 600)
    assert chunks[0] == para.strip()
    sentences = split_message("One sentence here. " * 50, 100)
    assert all(chunk.endswith(".") for chunk in sentences)
    words = split_message("word " * 100, 52)
    assert all(set(chunk.split()) == {"word"} for chunk in words)


@pytest.mark.parametrize(("piece", "limit"), [(FAMILY, 23), (FLAG, 9), ("👍🏽", 7)])
def test_emoji_sequences_are_not_cut_in_a_run_without_spaces(piece: str, limit: int) -> None:
    """ZWJ families, flags and skin tones stay whole even when a hard cut is needed."""
    chunks = split_message(piece * 40, limit)
    assert len(chunks) > 1
    assert all(chunk.replace(piece, "") == "" for chunk in chunks)


def test_limit_too_small_for_an_astral_character_is_refused() -> None:
    """A one-unit limit could never carry an emoji, so it is rejected."""
    with pytest.raises(ValueError, match="at least 2"):
        split_message("😀", 1)
