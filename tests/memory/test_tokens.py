"""Token counting: real BPE data (counted natively as encoded), the conservative estimate,
message overhead, calibration."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.tokens import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    BPETokenizer,
    EstimateTokenizer,
    Tokenizer,
    UsageCalibration,
    _with_native_count,
    count_messages,
    default_tokenizer,
)
from providers.base import Message
from tests.memory.facts.test_gate_shortcuts import _dev_texts

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
PROSE = [
    "Hola, quería saber por qué me cobraron dos veces la suscripción de julio.",
    "Your order #4821 has shipped and should arrive on July 19, 2026.",
    "El técnico pasará el martes entre las 9:00 y las 14:30; ¿te viene bien?",
    "Please send me the invoice for €1,250.50 to ana.perez@example.com, thanks.",
]


def test_bpe_uses_real_o200k_data() -> None:
    """The BPE tokenizer loads o200k_base shipped in bpe_openai and counts exactly."""
    tokenizer = BPETokenizer()
    assert tokenizer.name == "bpe:o200k_base"
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count("") == 0
    assert tokenizer.count("Hola, ¿cómo estás?") == 6


def test_bpe_treats_special_token_text_as_plain_text() -> None:
    """User text that looks like a special token is counted, never rejected."""
    assert BPETokenizer().count("<|endoftext|> hi") > 1


def test_default_tokenizer_is_shared_bpe() -> None:
    """default_tokenizer() returns one cached BPE instance when the data loads."""
    first = default_tokenizer()
    assert first is default_tokenizer()
    assert first.name.startswith("bpe:")
    assert isinstance(first, Tokenizer)


@pytest.mark.parametrize("text", PROSE)
def test_estimate_is_conservative_on_prose(text: str) -> None:
    """The estimate never undercounts ordinary Spanish/English chat text."""
    assert EstimateTokenizer().count(text) >= BPETokenizer().count(text)


def test_estimate_is_conservative_on_long_articles() -> None:
    """On the seed articles the estimate stays above the real count, within 1.6x."""
    articles = sorted(SEEDS.glob("*.txt")) if SEEDS.is_dir() else []
    texts = [p.read_text(encoding="utf-8") for p in articles] or [" ".join(PROSE) * 20]
    for text in texts:
        real, estimate = BPETokenizer().count(text), EstimateTokenizer().count(text)
        assert real <= estimate <= 1.6 * real


@pytest.mark.parametrize("text", ["+34 612 345 678", "1234567890" * 5, "x y z " * 30, "😀😀"])
def test_estimate_counts_dense_text_by_pieces(text: str) -> None:
    """Digits, symbols and emoji are not undercounted by the length rule alone."""
    assert EstimateTokenizer().count(text) >= BPETokenizer().count(text) * 0.9


@settings(deadline=None)
@given(st.text(max_size=200))
def test_counts_are_non_negative_and_empty_is_zero(text: str) -> None:
    """Both tokenizers return a count >= 0 on any text, and > 0 for non-empty text."""
    for tokenizer in (default_tokenizer(), EstimateTokenizer()):
        count = tokenizer.count(text)
        assert count >= 0
        assert (count > 0) == bool(text)


def test_count_messages_adds_overhead() -> None:
    """A request costs its texts plus a fixed overhead per message and per request."""
    tokenizer = EstimateTokenizer()
    messages = [Message("user", "hola"), Message("assistant", "¿qué tal?")]
    expected = (
        REQUEST_OVERHEAD
        + tokenizer.count("sys")
        + MESSAGE_OVERHEAD
        + sum(tokenizer.count(m.content) + MESSAGE_OVERHEAD for m in messages)
    )
    assert count_messages(tokenizer, "sys", messages) == expected
    assert count_messages(tokenizer, "", []) == REQUEST_OVERHEAD + MESSAGE_OVERHEAD


def test_calibration_first_observation_sets_factor() -> None:
    """The first report sets the factor to the observed ratio."""
    calibration = UsageCalibration().observe(100, 120)
    assert calibration.factor == pytest.approx(1.2)
    assert calibration.samples == 1
    assert calibration.apply(100) == 120


def test_calibration_is_smoothed() -> None:
    """Later reports move the factor only partly toward the new ratio."""
    calibration = UsageCalibration().observe(100, 100).observe(100, 200)
    assert calibration.factor == pytest.approx(1.3)


def test_calibration_is_bounded() -> None:
    """Absurd ratios are clamped to [0.5, 2.0]."""
    assert UsageCalibration().observe(100, 10_000).factor == 2.0
    assert UsageCalibration().observe(100, 1).factor == 0.5


def test_calibration_ignores_missing_usage_and_is_immutable() -> None:
    """A zero report or zero count changes nothing; observe returns a new value."""
    base = UsageCalibration()
    assert base.observe(100, 0) is base
    assert base.observe(0, 50) is base
    assert base.observe(100, 150) is not base
    assert base.factor == 1.0


def test_calibration_apply_rounds_up() -> None:
    """Corrected counts round up so budgets stay conservative."""
    calibration = UsageCalibration().observe(3, 4)
    assert calibration.apply(10) == 14
    assert calibration.apply(0) == 0


@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 100_000)), max_size=30))
def test_calibration_factor_always_in_bounds(observations: list[tuple[int, int]]) -> None:
    """Whatever is reported, the factor stays within its bounds."""
    calibration = UsageCalibration()
    for ours, reported in observations:
        calibration = calibration.observe(ours, reported)
        assert calibration.low <= calibration.factor <= calibration.high


# The native count is `len(encode_ordinary(text))` and raises what it raises (issue 29).


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
