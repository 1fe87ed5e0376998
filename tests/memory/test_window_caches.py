"""The readings the loop takes of every window text, turn after turn, outlast 1,000 chats."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import _lru_cache_wrapper

import pytest

from memory.blocks import neutralize
from memory.caches import WINDOW_TEXTS
from memory.recall.terms import _analysed
from memory.tokens import BPETokenizer, default_tokenizer
from memory.topic.cues import INTENT_FAMILIES
from memory.topic.families import _index, _read_families
from memory.topic.support import _casefolded
from memory.topic.text import term_set

# 1,000 chats, a window of 6 exchanges (12 texts) each, and a summary each.
CHATS_TEXTS = 1_000 * (12 + 1)


def _families(text: str) -> object:
    return _read_families(_index(INTENT_FAMILIES), text)


def _tokens(text: str) -> int:
    return default_tokenizer().count(text)


def _cache_of(read: Callable[[str], object]) -> _lru_cache_wrapper[object]:
    if read is _families:
        return _read_families
    if read is _tokens:
        tokenizer = default_tokenizer()
        assert isinstance(tokenizer, BPETokenizer), "the BPE tables ship with the package"
        return tokenizer._count
    assert isinstance(read, _lru_cache_wrapper)
    return read


@pytest.mark.parametrize(
    "read",
    [_tokens, term_set, _families, _casefolded, neutralize, _analysed],
    ids=["tokens", "term_set", "families", "casefolded", "neutralize", "recall_terms"],
)
def test_a_second_pass_over_a_thousand_chats_windows_reads_nothing_anew(
    read: Callable[[str], object],
) -> None:
    """Each per-text reading of a window keeps 1,000 chats' windows: the next turn's pass hits."""
    assert WINDOW_TEXTS >= CHATS_TEXTS
    cache = _cache_of(read)
    tag = uuid.uuid4().hex  # texts no earlier test has read
    texts = [f"Mi pedido {tag}-{i} no llegó, ¿me ayudas con el envío?" for i in range(CHATS_TEXTS)]
    for text in texts:
        read(text)
    before = cache.cache_info()
    for text in texts:
        read(text)
    after = cache.cache_info()
    assert after.misses == before.misses, "a window text was read anew"
    assert after.hits - before.hits == CHATS_TEXTS
