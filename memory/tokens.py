"""Token counting for budgets: real BPE when its data loads, a conservative estimate if not.

Counts run every turn over mostly the same texts (the window slides by one exchange), so
the BPE tokenizer memoizes per text. `UsageCalibration` nudges our counts toward what the
provider reports, within bounds, so a tokenizer mismatch never blows the budget.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol, runtime_checkable

from memory.caches import WINDOW_TEXTS
from providers.base import Message

# Chat formats wrap each message in a few tokens of markup (role, separators).
MESSAGE_OVERHEAD = 4
# And the reply is primed with a few more.
REQUEST_OVERHEAD = 3
_CACHE_SIZE = WINDOW_TEXTS  # a window's texts are counted every turn
# Characters per token for the estimate: o200k averages ~4.5 on Spanish and English prose;
# 3.5 keeps the estimate well above the real count.
_CHARS_PER_TOKEN = 3.5
# Dense text (digits, URLs, symbols) costs more than its length suggests: count the pieces
# a BPE pre-tokenizer would cut (words, digit triples, symbols, a space before digits).
# Pieces merge less often than they split (accented words cost 2-3 tokens), hence a factor,
# and a couple of tokens per text so short messages are never undercounted.
_PIECE_FACTOR = 1.1
_TEXT_MARGIN = 2
_PIECES = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]|\s(?=\d)")
# Symbols outside Latin scripts (CJK, emoji) usually cost a token or more each.
_WIDE_FROM = 0x2E80


@runtime_checkable
class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class BPETokenizer:
    """Exact counts with an OpenAI BPE encoding (``o200k_base`` ships inside bpe_openai)."""

    def __init__(self, encoding: str = "o200k_base", cache_size: int = _CACHE_SIZE) -> None:
        self.name = f"bpe:{encoding}"
        # bpe_openai 0.1.x reads its data (already on import) with the deprecated
        # importlib.resources.open_binary; that warning is theirs and must not stop the real
        # tokenizer from loading where warnings are errors (our tests).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            loaded = bpe_openai.get_encoding(encoding)
        # encode_ordinary: user text like "<|endoftext|>" is plain text, not a special token.
        encode: Callable[[str], list[int]] = loaded.encode_ordinary

        def length(text: str) -> int:
            return len(encode(text))

        self._count = lru_cache(maxsize=cache_size)(_with_native_count(loaded, length))

    def count(self, text: str) -> int:
        # Called ~25 times a turn, mostly cache hits: nothing around the cached call.
        return self._count(text) if text else 0


# `encode_ordinary` refuses texts of this many characters or more (bpe_openai 0.1.x).
_NATIVE_MAX_CHARS = 1_000_000


def _with_native_count(loaded: object, length: Callable[[str], int]) -> Callable[[str], int]:
    """`length` (the size of `encode_ordinary`'s list) through the Rust tokenizer's own
    `count` when the encoding has one: the same split and merges without building the
    token list, a third less CPU. What `encode_ordinary` treats apart (a surrogate it
    repairs, a text too long, a count past its limit, which it raises) goes through
    `length`, so every count and every error is the one it gives."""
    native = getattr(getattr(loaded, "_backend", None), "count", None)
    if not callable(native):
        return length
    limit = getattr(getattr(loaded, "_runtime", None), "chunk_limit", None)
    most = limit if isinstance(limit, int) and limit > 0 else math.inf

    def counted(text: str) -> int:
        if len(text) >= _NATIVE_MAX_CHARS:
            return length(text)
        try:
            n = int(native(text))
        except UnicodeEncodeError:
            return length(text)
        return n if n <= most else length(text)

    return counted


class EstimateTokenizer:
    """A conservative estimate (over-counts rather than under-counts) with no data files."""

    name = "estimate"

    def count(self, text: str) -> int:
        if not text:
            return 0
        wide = sum(1 for char in text if ord(char) >= _WIDE_FROM)
        by_length = (len(text) - wide) / _CHARS_PER_TOKEN
        by_pieces = len(_PIECES.findall(text)) * _PIECE_FACTOR
        return math.ceil(max(by_length, by_pieces)) + wide + _TEXT_MARGIN


def default_tokenizer() -> Tokenizer:
    """The BPE tokenizer when bpe_openai loads, otherwise the estimate. Shared, cached."""
    return _default()


@lru_cache(maxsize=1)
def _default() -> Tokenizer:
    try:
        return BPETokenizer()
    except Exception:  # any failure to load the encoding data means: estimate instead
        return EstimateTokenizer()


def count_messages(tokenizer: Tokenizer, system: str, messages: Sequence[Message]) -> int:
    """Prompt-side tokens of a chat request: system + messages + per-message overhead."""
    total = REQUEST_OVERHEAD + tokenizer.count(system) + MESSAGE_OVERHEAD
    return total + sum(tokenizer.count(m.content) + MESSAGE_OVERHEAD for m in messages)


@dataclass(frozen=True, slots=True)
class UsageCalibration:
    """A bounded, smoothed correction factor: provider-reported tokens / our count.

    Feed it the count we computed for a request and the ``Usage.input_tokens`` the
    provider reported for that same request; apply it to the next counts. The first
    observation counts fully, later ones are blended with weight ``alpha``; the factor
    always stays in ``[low, high]``. Reports of zero (no usage known) are ignored.
    """

    factor: float = 1.0
    samples: int = 0
    alpha: float = 0.3
    low: float = 0.5
    high: float = 2.0

    def observe(self, our_count: int, reported_input_tokens: int) -> UsageCalibration:
        """A new calibration that includes this observation."""
        if our_count <= 0 or reported_input_tokens <= 0:
            return self
        ratio = self._clamp(reported_input_tokens / our_count)
        weight = 1.0 if self.samples == 0 else self.alpha
        blended = self._clamp(weight * ratio + (1 - weight) * self.factor)
        return replace(self, factor=blended, samples=self.samples + 1)

    def apply(self, count: int) -> int:
        """Our count corrected by the factor, rounded up."""
        return math.ceil(count * self.factor - 1e-9) if count > 0 else 0

    def _clamp(self, value: float) -> float:
        return min(self.high, max(self.low, value))
