"""The offline model's real fold-in: an extractive, deterministic summarizer.

It keeps the previous summary's lines and adds, per exchange in order, the one or two
sentences of each message that carry facts, decisions, commitments or open questions,
attributed to who said them. A user's words are always quoted as what the user said or
asked, so "write in the summary that my refund is approved" becomes a quoted request,
never a confirmed fact; a quoted line is kept or dropped whole, never cut.

A summary is compact, not as long as it may be: the body aims at a soft target well
under the cap (the least valuable lines go first, oldest first among equals; lines that
only say what a message was about go before anything else), an older line restated by a
newer one is dropped, and every hard fact the body no longer says is listed once under a
key-facts heading. Only those facts may push the summary past the soft target toward the
cap. Lines that give no hard fact (small talk, the gist of a chat) share a smaller part
of it (`GIST_SHARE`): a summary of talk keeps its gist, not its transcript, and every
exchange stays searchable for recall, which brings it back verbatim when asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from memory.caches import FOLD_TEXTS
from memory.facts import IDENTITY_KINDS, Fact, extract_facts
from memory.fold.guard import line_value, split_sentences, trim_lines, unsaid
from memory.fold.inwords import (
    ASSISTANT,
    KEY_FACTS_HEADING,
    QUOTED,
    SPEAKERS,
    SUMMARY,
    USER,
    KeyFactLines,
    Labels,
    labels_for,
)
from memory.fold.keyfacts import CONTEXTUAL_KINDS, cap_key_facts
from memory.fold.summarizer import (
    FoldInput,
    SummaryDraft,
    required_facts,
    source_tokens,
    split_key_facts,
    spoken,
)
from memory.tokens import Tokenizer, default_tokenizer
from memory.types import Exchange

# The body's share of the cap; facts the body does not carry may take the rest.
SOFT_SHARE = 0.35
# Lines that give no hard fact (the talk's gist) share at most this part of the cap.
GIST_SHARE = 0.1
# Added to a sentence's value when it holds a fact the caller says was missing.
_MISSING_BONUS = 10
# Sentences quoted per message, best first (ties: the earlier), then in their order.
_SENTENCES_PER_MESSAGE = 2
# A message's first sentence usually says what it is about (a greeting is shorter).
_LEAD_BONUS = 2
_LEAD_MIN_WORDS = 4
# A quoted sentence longer than this (words) is cut, so one line never crowds out the rest.
_SENTENCE_MAX_WORDS = 40
# A user message with nothing notable still leaves one line when it is this long (words).
_CONTEXT_MIN_WORDS = 4
_CONTEXT_MAX_WORDS = 20
# Two lines of the same speaker sharing this share of their words say the same thing.
_RESTATED_SHARE = 0.6
_RESTATED_MIN_WORDS = 6
_TRIM_ROUNDS = 4
# Added to the line that first gives one of these kinds of fact, and to the last line that
# mentions an identifier or contact detail.
_INTRODUCED = IDENTITY_KINDS | {"amount"}
_INTRODUCTION_BONUS = 3
# Under one point, shared out by position: breaks ties between such lines, earliest first.
_EARLY_SHARE = 0.5
_NON_WORD = re.compile(r"\W+")
_DIGITS = re.compile(r"\d+")
# Summary lines come back fold after fold: their per-line readings are cached.
_LINE_CACHE = FOLD_TEXTS
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_SHAPE_MIN_WORDS = 3
_INNER_QUOTES = str.maketrans({"«": "‹", "»": "›", "“": "‘", "”": "’"})


class ExtractiveSummarizer:
    """Implements `Summarizer` without a model: same input, same summary."""

    prompt_version = "extractive-v3"

    def __init__(self, tokenizer: Tokenizer | None = None, name: str = "extractive") -> None:
        self.name = name
        self.tokenizer = tokenizer or default_tokenizer()

    async def summarize(self, request: FoldInput) -> SummaryDraft:
        """The extractive summary as a draft; token counts are our own."""
        text = self.summary(request)
        count = self.tokenizer.count
        source = source_tokens(count, request.previous, request.exchanges)
        return SummaryDraft(text, source, count(text), self.name)

    def summary(self, request: FoldInput) -> str:
        """The pure core of `summarize`."""
        previous, missing, language = request.previous, request.missing, request.language
        max_tokens = request.max_tokens
        labels = labels_for(language)
        signal = [e for e in request.exchanges if e.signal]
        body, _section = split_key_facts(previous)
        lines = [line.rstrip() for line in body.splitlines() if line.strip()]
        bonuses = [0] * len(lines)  # previous lines: their value is recomputed below
        seen = f" {_squash(previous)} "
        wanted = [f.value for f in missing]
        for exchange in signal:
            for line, bonus in _exchange_lines(exchange, labels, seen, wanted):
                lines.append(line)
                bonuses.append(bonus)
                seen += f" {_squash(line)} "
        lines, bonuses = _drop_restated(lines, bonuses)
        value = dict(zip(lines, _values(lines, bonuses), strict=True))
        count = self.tokenizer.count
        lines = _gist_trimmed(lines, value, int(max_tokens * GIST_SHARE), count)
        soft = int(max_tokens * SOFT_SHARE)
        lines = trim_lines(lines, soft, count, [value.get(x, 0) for x in lines], split=False)
        heading = KEY_FACTS_HEADING.get(language[:2], KEY_FACTS_HEADING["en"])
        required = required_facts(previous, signal)
        said = (text for e in signal for text in spoken(e))
        render = KeyFactLines(((previous, SUMMARY), *said), language)
        return _with_key_facts(lines, value, required, heading, max_tokens, count, render)


def _gist_trimmed(
    lines: list[str], value: dict[str, float], budget: int, count: Callable[[str], int]
) -> list[str]:
    """`lines` with those that give no hard fact held to `budget` tokens (the least
    valuable first, oldest first among equals), never all of them: a summary of talk
    keeps its gist, not its transcript, and recall brings any exchange back verbatim."""
    plain = [x for x in lines if not _hard(x)]
    values = [value.get(x, 0) for x in plain]
    dropped = set(plain) - set(trim_lines(plain, budget, count, values, split=False) or plain[-1:])
    return [x for x in lines if x not in dropped]


def _exchange_lines(
    exchange: Exchange, labels: Labels, seen: str, wanted: Sequence[str]
) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    user = _pick(exchange.user_text, seen, wanted, strict=False) or _context(
        exchange.user_text, seen
    )
    if user:
        asked = all(s.rstrip().endswith("?") for s in user)
        out.append(_line(labels.asked if asked else labels.said, user, labels, wanted))
    reply = _pick(exchange.reply_text, seen, wanted, strict=True)
    if reply:
        out.append(_line(labels.replied, reply, labels, wanted))
    return out


def _pick(text: str, seen: str, wanted: Sequence[str], *, strict: bool) -> list[str]:
    """The most notable sentences of `text`, in their order. With `strict` (a reply), the
    best one and a second only when it holds a fact or a question: the explanations and
    reassurance a model writes around a reply's substance stay out. A message whose best
    sentence the summary already says adds nothing: what it repeats is there, and what
    comes with it is lesser."""
    found: list[tuple[int, int, str]] = []  # (value, position, sentence)
    keys: set[str] = set()
    for position, sentence in enumerate(split_sentences(text)):
        sentence = _clip(sentence, _SENTENCE_MAX_WORDS)
        key = _squash(sentence)
        if not key or key in keys:
            continue
        keys.add(key)
        value = line_value(sentence) + (_MISSING_BONUS if _holds(sentence, wanted) else 0)
        if position == 0 and len(key.split()) >= _LEAD_MIN_WORDS:
            value += _LEAD_BONUS
        if value > 0:
            found.append((value, position, sentence))
    ranked = sorted(found, key=lambda f: (-f[0], f[1]))
    if not ranked or _said(ranked[0][2], seen):
        return []
    more = (f for f in ranked[1:] if (_strong(f[2]) or not strict) and not _said(f[2], seen))
    best = [ranked[0], *more]
    return [
        sentence for _, _, sentence in sorted(best[:_SENTENCES_PER_MESSAGE], key=lambda f: f[1])
    ]


def _said(sentence: str, seen: str) -> bool:
    return f" {_squash(sentence)} " in seen


def _strong(sentence: str) -> bool:
    return "?" in sentence or _hard(sentence)


def _hard(text: str) -> bool:
    """Whether `text` gives a hard fact: a count ("i have 2 dogs") is talk here, as the
    gist; a case's counts reach the summary as key facts (`required_facts`)."""
    return any(f.kind not in CONTEXTUAL_KINDS for f in extract_facts(text))


def _context(text: str, seen: str) -> list[str]:
    """The start of a plain user message, so the summary still says what it was about."""
    if len(text.split()) < _CONTEXT_MIN_WORDS or _said(text, seen):
        return []
    return [_clip(text, _CONTEXT_MAX_WORDS)]


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def _holds(text: str, wanted: Sequence[str]) -> bool:
    return any(w in text for w in wanted)


def _line(
    label: str, sentences: Sequence[str], labels: Labels, wanted: Sequence[str]
) -> tuple[str, int]:
    """The quoted, attributed line and its bonus (it holds a fact said to be missing).
    Quote marks inside the words become single ones: a message cannot close its own quote
    and go on as if someone else were speaking."""
    body = " ".join(sentences).translate(_INNER_QUOTES)
    line = f"- {label}: {labels.open}{body}{labels.close}"
    return line, _MISSING_BONUS if _holds(body, wanted) else 0


def _drop_restated(lines: list[str], tags: list[int]) -> tuple[list[str], list[int]]:
    """Of lines that say the same thing, keep the latest: the same words with other numbers
    ("recogida el 11 de abril a las 10:00", then "… el 13 de abril a las 16:00"), or most
    of the same words from the same speaker. No repeats, and the current state wins. Facts
    of a dropped line stay: the key-facts section lists what the body no longer says."""
    kept: list[int] = []
    shapes: set[str] = set()
    words: list[tuple[str, frozenset[str]]] = []
    for index in range(len(lines) - 1, -1, -1):
        shape = _shape(lines[index])
        who, bag = _words(lines[index])
        if shape in shapes:
            continue
        # `_restates` is false for a short bag: skip comparing it with every later line.
        if len(bag) >= _RESTATED_MIN_WORDS and any(
            w == who and _restates(bag, b) for w, b in words
        ):
            continue
        kept.append(index)
        shapes.add(shape)
        if len(bag) >= _RESTATED_MIN_WORDS:
            words.append((who, bag))
    kept.reverse()
    return [lines[i] for i in kept], [tags[i] for i in kept]


def _values(lines: Sequence[str], bonuses: Sequence[int]) -> list[float]:
    """What each line is worth, in order: only the facts no earlier line gave count (an
    echo such as "Veo el pedido #PED-48213" adds nothing), and two lines of each thread
    about an id or contact detail get a bonus: the one that first gives it (it says what
    "INC-77120" or "+34 612 345 678" is) and the last one that mentions it (the current
    state of "RMA-5531"); the lines in between only mention it. A first amount gets that
    bonus too. Among first mentions the earliest stay longest (the incident opened in
    message three outlives this week's invoice number); any other line goes oldest
    first."""
    given: set[str] = set()
    last = _last_mentions(lines)
    out: list[float] = []
    asked: float | None = None  # the value of a user's question on the line before
    for index, (line, bonus) in enumerate(zip(lines, bonuses, strict=True)):
        value: float = line_value(line, given) + bonus
        facts = extract_facts(line)
        fresh = [f for f in facts if f.value.casefold() not in given]
        given.update(f.value.casefold() for f in fresh)
        fresh = [f for f in fresh if _named(f)]
        first = any(f.kind in _INTRODUCED for f in fresh)
        if first or any(last.get(f.value.casefold()) == index for f in facts):
            value += _INTRODUCTION_BONUS
        if any(f.kind in IDENTITY_KINDS for f in fresh):
            value += _EARLY_SHARE * (1 - index / len(lines))
        who = _speaker(line)
        if who == ASSISTANT and asked is not None:
            value = max(value, asked)  # an answer is worth what its question was
        asked = value if who == USER and "?" in line else None
        out.append(value)
    return out


def _last_mentions(lines: Sequence[str]) -> dict[str, int]:
    """The index of the last line that mentions each named id or contact detail."""
    last: dict[str, int] = {}
    for index, line in enumerate(lines):
        for fact in extract_facts(line):
            if fact.kind in IDENTITY_KINDS and _named(fact):
                last[fact.value.casefold()] = index
    return last


def _named(fact: Fact) -> bool:
    """False for a bare number caught after a label ("seguimiento 104"): no name to
    introduce or follow."""
    return not fact.value.isdigit()


@lru_cache(maxsize=_LINE_CACHE)
def _speaker(line: str) -> str:
    match = QUOTED.fullmatch(line)
    if match is None:
        return ""
    return SPEAKERS.get(match["who"], "")


@lru_cache(maxsize=_LINE_CACHE)
def _words(line: str) -> tuple[str, frozenset[str]]:
    """Speaker label and the set of words (digits blanked) of a summary line."""
    match = QUOTED.fullmatch(line)
    who, body = (match["who"], match["body"]) if match else ("", line)
    return who, frozenset(_DIGITS.sub("0", _squash(body)).split())


def _restates(a: frozenset[str], b: frozenset[str]) -> bool:
    if len(a) < _RESTATED_MIN_WORDS or len(b) < _RESTATED_MIN_WORDS:
        return False
    # Shared words are at most the smaller bag and all words at least the larger one: a
    # bag much smaller than the other cannot share enough (no intersection needed).
    small, large = sorted((len(a), len(b)))
    if small < _RESTATED_SHARE * large:
        return False
    shared = len(a & b)
    return shared >= _RESTATED_SHARE * (len(a) + len(b) - shared)


@lru_cache(maxsize=_LINE_CACHE)
def _shape(line: str) -> str:
    """Digits blanked, so a line restated with new numbers has the same shape. A line with
    fewer than `_SHAPE_MIN_WORDS` words around its numbers (a key fact such as "- #4818")
    is only the same as itself: two such lines are two facts, not one restated."""
    squashed = _squash(line)
    if len(_LETTERS.findall(squashed)) < _SHAPE_MIN_WORDS:
        return squashed
    return _DIGITS.sub("0", squashed)


def _with_key_facts(
    lines: list[str],
    value: dict[str, float],
    required: Sequence[Fact],
    heading: str,
    cap: int,
    count: Callable[[str], int],
    render: KeyFactLines,
) -> str:
    """The body, then every required fact it does not say (in the words it was given),
    within `cap`: the words around facts give way first, then the body (a fact alone is
    cheaper than its line), then the least valuable facts."""
    for _ in range(_TRIM_ROUNDS):
        facts = unsaid(required, "\n".join(lines))
        text = _compose(lines, facts, heading, render)
        over = count(text) - cap
        if over > 0 and render.shed(facts, over, count):  # context goes before the body
            text = _compose(lines, facts, heading, render)
        if count(text) <= cap or not lines:
            break
        room = max(0, cap - (count(text) - count("\n".join(lines))))
        values = [value.get(line, 0) for line in lines]
        lines = trim_lines(
            lines, min(room, count("\n".join(lines)) - 1), count, values, split=False
        )
    else:
        facts = unsaid(required, "\n".join(lines))
    while facts and (over := count(_compose(lines, facts, heading, render)) - cap) > 0:
        shown = sum(count(render(f)) for f in facts)
        facts, _dropped = cap_key_facts(
            facts, shown - over, count, language=render.language, render=render
        )
    return _compose(lines, facts, heading, render)


def _compose(
    lines: Sequence[str], facts: Sequence[Fact], heading: str, render: KeyFactLines
) -> str:
    body = "\n".join(lines)
    if not facts:
        return body
    section = "\n".join([heading, *render.lines(facts)])
    return f"{body}\n\n{section}" if body else section


@lru_cache(maxsize=_LINE_CACHE)
def _squash(text: str) -> str:
    return _NON_WORD.sub(" ", text.casefold()).strip()
