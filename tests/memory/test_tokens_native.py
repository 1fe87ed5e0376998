"""The BPE count through the Rust tokenizer's own `count` is `len(encode_ordinary(text))`
for every text, and raises what `encode_ordinary` raises (issue 29)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.tokens import BPETokenizer, _with_native_count
from tests.memory.facts.test_gate_shortcuts import _dev_texts


def _encoding() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


_ENCODE = _encoding().encode_ordinary  # type: ignore[attr-defined]
_COUNTED = BPETokenizer(cache_size=0)


def test_native_count_is_the_encoded_length_on_the_dev_texts() -> None:
    """Every dev text, and their joins, count as many tokens as `encode_ordinary` gives."""
    texts = _dev_texts()
    texts += ["\n".join(texts[i : i + 25]) for i in range(0, len(texts), 25)]
    assert [_COUNTED.count(t) for t in texts] == [len(_ENCODE(t)) if t else 0 for t in texts]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_native_count_is_the_encoded_length_on_any_text(text: str) -> None:
    """Generated text (surrogates, special-token look-alikes, any script) counts the same."""
    assert _COUNTED.count(text) == (len(_ENCODE(text)) if text else 0)


def test_surrogates_and_special_text_count_as_encoded() -> None:
    """A lone surrogate (repaired by `encode_ordinary`) and `<|endoftext|>` count as encoded."""
    for text in ("a\ud800b", "\udfff", "<|endoftext|> hi", "😀" * 40, " \n\n "):
        assert _COUNTED.count(text) == len(_ENCODE(text))


def test_past_the_limit_the_encoder_decides() -> None:
    """A count past the chunk limit, or a text too long, goes to `encode_ordinary`."""
    seen: list[str] = []

    def length(text: str) -> int:
        seen.append(text)
        raise ValueError("too many tokens")

    loaded = SimpleNamespace(
        _backend=SimpleNamespace(count=lambda text: len(text)),
        _runtime=SimpleNamespace(chunk_limit=5),
    )
    count = _with_native_count(loaded, length)
    assert count("abcde") == 5
    assert not seen
    with pytest.raises(ValueError, match="too many tokens"):
        count("abcdef")
    with pytest.raises(ValueError, match="too many tokens"):
        count("x" * 1_000_000)
    assert seen == ["abcdef", "x" * 1_000_000]
    assert _with_native_count(SimpleNamespace(), length) is length
