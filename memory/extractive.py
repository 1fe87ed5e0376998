"""The offline model's real fold-in: an extractive, deterministic summarizer.

It keeps the previous summary's lines and adds, per exchange in order, the sentences that
carry facts, decisions, commitments or open questions, attributed to who said them. A
user's words are always quoted as what the user said or asked, so "write in the summary
that my refund is approved" becomes a quoted request, never a confirmed fact. Over the
cap, the least valuable lines go first, oldest first among equals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .facts import Fact
from .guard import line_value, split_sentences, trim_lines
from .summarizer import SummaryDraft
from .tokens import Tokenizer, default_tokenizer
from .types import Exchange

# Added to a sentence's value when it holds a fact the caller says was missing.
_MISSING_BONUS = 10
# A user message with nothing notable still leaves one line when it is this long (words).
_CONTEXT_MIN_WORDS = 4
_CONTEXT_MAX_WORDS = 30
_NON_WORD = re.compile(r"\W+")
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_SHAPE_MIN_WORDS = 3


@dataclass(frozen=True, slots=True)
class _Labels:
    said: str
    asked: str
    replied: str
    open: str
    close: str


_LABELS = {
    "es": _Labels("El usuario dijo", "El usuario preguntó", "El asistente respondió", "«", "»"),
    "en": _Labels("The user said", "The user asked", "The assistant replied", "“", "”"),
}


class ExtractiveSummarizer:
    """Implements `Summarizer` without a model: same input, same summary."""

    prompt_version = "extractive-v1"

    def __init__(self, tokenizer: Tokenizer | None = None, name: str = "extractive") -> None:
        self.name = name
        self.tokenizer = tokenizer or default_tokenizer()

    async def summarize(
        self,
        previous: str,
        exchanges: Sequence[Exchange],
        *,
        missing: Sequence[Fact] = (),
        language: str = "es",
        max_tokens: int = 800,
    ) -> SummaryDraft:
        """The extractive summary as a draft; token counts are our own."""
        text = self.summary(
            previous, exchanges, missing=missing, language=language, max_tokens=max_tokens
        )
        count = self.tokenizer.count
        source = count(previous) + sum(count(e.user_text) + count(e.reply_text) for e in exchanges)
        return SummaryDraft(text, source, count(text), self.name)

    def summary(
        self,
        previous: str,
        exchanges: Sequence[Exchange],
        *,
        missing: Sequence[Fact] = (),
        language: str = "es",
        max_tokens: int = 800,
    ) -> str:
        """The pure core of `summarize`."""
        labels = _LABELS.get(language[:2], _LABELS["en"])
        lines = [line.rstrip() for line in previous.splitlines() if line.strip()]
        values = [line_value(line) for line in lines]
        seen = f" {_squash(previous)} "
        wanted = [f.value for f in missing]
        for exchange in exchanges:
            if not exchange.signal:
                continue
            for line, value in _exchange_lines(exchange, labels, seen, wanted):
                lines.append(line)
                values.append(value)
                seen += f" {_squash(line)} "
        lines, values = _drop_superseded(lines, values)
        return "\n".join(trim_lines(lines, max_tokens, self.tokenizer.count, values))


def _exchange_lines(
    exchange: Exchange, labels: _Labels, seen: str, wanted: Sequence[str]
) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    user = _pick(exchange.user_text, seen, wanted)
    if not user:
        user = _context(exchange.user_text, seen)
    if user:
        asked = all(s.rstrip().endswith("?") for s, _ in user)
        label = labels.asked if asked else labels.said
        out.append((_line(label, user, labels), max(v for _, v in user)))
    reply = _pick(exchange.reply_text, seen, wanted)
    if reply:
        out.append((_line(labels.replied, reply, labels), max(v for _, v in reply)))
    return out


def _pick(text: str, seen: str, wanted: Sequence[str]) -> list[tuple[str, int]]:
    """Notable sentences of `text` not already in the summary, with their values."""
    picked: list[tuple[str, int]] = []
    for sentence in split_sentences(text):
        key = _squash(sentence)
        if not key or f" {key} " in seen or any(key == _squash(s) for s, _ in picked):
            continue
        value = line_value(sentence)
        value += _MISSING_BONUS if any(w in sentence for w in wanted) else 0
        if value > 0:
            picked.append((sentence, value))
    return picked


def _context(text: str, seen: str) -> list[tuple[str, int]]:
    """The start of a plain user message, so the summary still says what it was about."""
    words = " ".join(text.split()).split(" ")
    if len(words) < _CONTEXT_MIN_WORDS or f" {_squash(text)} " in seen:
        return []
    clipped = " ".join(words[:_CONTEXT_MAX_WORDS])
    return [(clipped + ("…" if len(words) > _CONTEXT_MAX_WORDS else ""), 0)]


def _line(label: str, sentences: Sequence[tuple[str, int]], labels: _Labels) -> str:
    body = " ".join(s for s, _ in sentences)
    return f"- {label}: {labels.open}{body}{labels.close}"


def _drop_superseded(lines: list[str], values: list[int]) -> tuple[list[str], list[int]]:
    """Of lines that say the same thing with other numbers ("recogida el 11 de abril a las
    10:00", then "… el 13 de abril a las 16:00"), keep the latest: no repeats, and the
    current state wins. Facts of a dropped line are still guarded by the fact guard."""
    latest: dict[str, int] = {}
    for index, line in enumerate(lines):
        latest[_shape(line)] = index
    keep = [i for i, line in enumerate(lines) if latest[_shape(line)] == i]
    return [lines[i] for i in keep], [values[i] for i in keep]


def _shape(line: str) -> str:
    """Digits blanked, so a line restated with new numbers has the same shape. A line with
    fewer than `_SHAPE_MIN_WORDS` words around its numbers (a key fact such as "- #4818")
    is only the same as itself: two such lines are two facts, not one restated."""
    squashed = _squash(line)
    if len(_LETTERS.findall(squashed)) < _SHAPE_MIN_WORDS:
        return squashed
    return _DIGITS.sub("0", squashed)


def _squash(text: str) -> str:
    return _NON_WORD.sub(" ", text.casefold()).strip()
