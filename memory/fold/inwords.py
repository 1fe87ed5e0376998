"""Key-fact lines in the words the chat gave each fact.

"- 2 cm" says nothing to a model; "- Usuario dijo: «baja unos 2 cm al dia»" does, as do
"- a Dell XPS 13 9310" against "- Dell" and one line for "el martes 19 a las 8:30 o el
jueves 21 por la tarde" against three bare dates. A line gives the value with up to
`CONTEXT_BEFORE` content words before it and `CONTEXT_AFTER` after, within its clause.
A user's words are quoted and labelled as the summary's own lines are (`LABELS`): "mi
reembolso de 300 € ya está aprobado" stays what the user said, never a confirmed fact
under "Datos clave". The assistant's words are its own and go as they are. A fact no
source gives in words that read it back is written as `render_fact` writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory.facts import Fact, facts_of
from memory.fold.keyfacts import expendable_order, render_fact
from memory.text.fold import fold
from memory.text.stopwords import RECALL_STOP_WORDS


@dataclass(frozen=True, slots=True)
class Labels:
    """How a summary line says who spoke, and its quote marks, in one language."""

    said: str
    asked: str
    replied: str
    open: str
    close: str


LABELS = {
    "es": Labels("Usuario dijo", "Usuario preguntó", "Asistente", "«", "»"),
    "en": Labels("User said", "User asked", "Assistant", "“", "”"),
}
KEY_FACTS_HEADING = {"es": "Datos clave:", "en": "Key facts:"}
USER, ASSISTANT, SUMMARY = "user", "assistant", ""
SPEAKERS = {
    label: who
    for labels in LABELS.values()
    for label, who in ((labels.said, USER), (labels.asked, USER), (labels.replied, ASSISTANT))
}
# A summary line of someone's words: "- Usuario dijo: «…»", "- Assistant: “…”".
QUOTED = re.compile(r"- (?P<who>[^:«“\n]{1,40}): [«“](?P<body>.*)[»”]")
_SAID = frozenset(labels.said for labels in LABELS.values())
_QUOTE_OPENS = re.compile(r"[ \t]*- (?P<who>[^:«“\n]{1,40}): [«“]")


def labels_for(language: str) -> Labels:
    return LABELS.get(language[:2], LABELS["en"])


# Content words before and after the value (function words between them come along).
# Fitted on facts_dev's fit half (`python -m bench.facts --split fit`: of 341 details,
# kept verbatim in the key-fact lines; the lines' tokens) against `bench.tokens`' request
# at turn 100 (its target: ≤ 10 % of full history): none 274 (3,099 tokens; 9.83 %),
# 1 and 1: 293 (3,910; 9.90 %), 1 and 2: 299 (3,894; 9.90 %), 2 and 2: 302 (4,053;
# 9.98 %), 1 and 3: 305 (3,928; 9.91 %), 1 and 4: 308 (3,951; 9.92 %), 2 and 3: 307
# (4,097; 9.99 %), 3 and 3: 310 (4,185; 10.04 %). A detail mostly follows its value
# ("2 cm al dia", "09:40 PST"); one word before says what the value is ("tag 7HX2KQ3").
CONTEXT_BEFORE = 1
CONTEXT_AFTER = 3
# Where a clause ends: a comma, stop or other mark before a space (not "1.250,00" or
# "3.12.0"), brackets, quotes (an apostrophe only outside a word: "O'Brien", "it's"), a
# line break and a list's bullet ("- " opening a line).
_CLAUSE_END = re.compile(
    r"[,;.!?…](?=\s|$|[»”\"')\]])|[()\[\]{}\"“”«»‹›‘’\n]|(?<!\w)'|'(?!\w)|(?m:^[ \t]*-[ \t])"
)
_TOKEN = re.compile(r"\S+")
_COMMA_GAP = re.compile(r"[ \t]*,[ \t]*")


Span = tuple[int, int, int, str]  # (source, begin, end, who)


class KeyFactLines:
    """Key-fact lines in the words each fact was given in `sources`, each a text and who
    wrote it (`USER`, `ASSISTANT`, or `SUMMARY`: a summary, whose lines say who): the
    value and up to `CONTEXT_BEFORE` content words before it and `CONTEXT_AFTER` after,
    within its clause, in the first place whose words read it back as the same fact; a
    user's quoted and labelled as the summary's lines are; `render_fact`'s line when
    there is none (and for a quoted message, whose line is its quote). The first source
    is the previous summary, whose key-facts lines are taken whole: a line reads the same
    fold after fold. Each fact is placed once."""

    def __init__(self, sources: Sequence[tuple[str, str]] = (), language: str = "es") -> None:
        self.sources = tuple(sources)
        self.language = language
        self.labels = labels_for(language)
        self._placed: dict[Fact, Span | None] = {}
        self._composed: dict[tuple[Fact, ...], tuple[str, ...]] = {}
        self._sections: dict[int, int] = {}  # source → where its key-facts section starts

    def __call__(self, fact: Fact) -> str:
        """The fact's own line (what it costs in the section)."""
        span = self._span(fact)
        return render_fact(fact, self.language) if span is None else self._line(span)

    def worded(self, fact: Fact) -> str | None:
        """The fact's line in the words a source gave it; None when none did, or when
        they are the value alone (a label says more: "- IP: 192.168.1.1")."""
        span = self._span(fact)
        if span is None or self.sources[span[0]][0][span[1] : span[2]] == fact.value:
            return None
        return self._line(span)

    def lines(self, facts: Iterable[Fact]) -> list[str]:
        """The facts' lines in order; facts whose words overlap in one source, or have a
        comma alone between them, share one line ("Rafael puede el martes 19 a las 8:30
        o el jueves 21", "Av. Corrientes 3450, C1193AAQ CABA"), and a fact whose
        value an earlier line already gives (as any kind) has none of its own.
        Remembered per list of facts until `shed` changes a line (a fold composes the
        same section several times)."""
        listed = tuple(facts)
        if listed not in self._composed:
            self._composed[listed] = self._compose(listed)
        return list(self._composed[listed])

    def _compose(self, facts: Sequence[Fact]) -> tuple[str, ...]:
        out: list[str] = []
        spans: list[Span | None] = []
        given: set[str] = set()  # the values of the facts the lines so far give
        for fact in facts:
            if fact.value in given:
                continue
            span = self._span(fact)
            near = None
            if span is not None:
                near = next((i for i, s in enumerate(spans) if self._joins(s, span)), None)
            if near is not None:
                held = spans[near]
                assert held is not None
                assert span is not None
                merged = (span[0], min(held[1], span[1]), max(held[2], span[2]), span[3])
                spans[near], out[near] = merged, self._line(merged)
                given.update(f.value for f in facts_of(out[near]))
                continue
            line = self(fact)
            given.add(fact.value)
            if line not in out:
                out.append(line)
                spans.append(span)
                given.update(f.value for f in facts_of(line))
        return tuple(out)

    def shed(
        self,
        facts: Sequence[Fact],
        over: int,
        count_tokens: Callable[[str], int],
        pinned: frozenset[Fact] = frozenset(),
    ) -> int:
        """Write facts as `render_fact` does, without their words, the most expendable
        first (`expendable_order`), until their lines are `over` tokens shorter; how many
        tokens that saved (less than `over` when every fact is bare)."""
        saved = 0
        for index in expendable_order(facts, pinned):
            if saved >= over:
                break
            fact = facts[index]
            if self._span(fact) is None:
                continue
            before = count_tokens(self(fact))
            self._placed[fact] = None
            self._composed.clear()
            saved += max(0, before - count_tokens(self(fact)))
        return saved

    def _joins(self, a: Span | None, b: Span) -> bool:
        """Whether spans `a` and `b` make one line: they overlap in one source, or a
        comma alone separates them (an address and its postcode, a list of references).
        """
        if a is None or a[0] != b[0]:
            return False
        if a[1] < b[2] and b[1] < a[2]:
            return True
        text = self.sources[a[0]][0]
        gap = text[a[2] : b[1]] if a[2] <= b[1] else text[b[2] : a[1]]
        return _COMMA_GAP.fullmatch(gap) is not None

    def _line(self, span: Span) -> str:
        source, begin, end, who = span
        words = self.sources[source][0][begin:end]
        if who == ASSISTANT:
            return f"- {words}"
        return f"- {self.labels.said}: {self.labels.open}{words}{self.labels.close}"

    def _span(self, fact: Fact) -> Span | None:
        if fact not in self._placed:
            self._placed[fact] = self._find(fact)
        return self._placed[fact]

    def _summary_line(self, source: int, position: int) -> tuple[str, tuple[int, int] | None]:
        if source not in self._sections:
            self._sections[source] = _section_start(self.sources[source][0])
        return _summary_line(self.sources[source][0], position, self._sections[source])

    def _find(self, fact: Fact) -> Span | None:
        if fact.kind == "quote":
            return None
        for source, (text, who) in enumerate(self.sources):
            start = text.find(fact.value)
            while start >= 0:
                end = start + len(fact.value)
                speaker, line = (who, None) if who else self._summary_line(source, start)
                if speaker:
                    begin, stop = line or _around(text, start, end)
                    span = (source, begin, stop, speaker)
                    found = facts_of(self._line(span))
                    if any(f.kind == fact.kind and f.value == fact.value for f in found):
                        return span
                start = text.find(fact.value, start + 1)
        return None


def in_words(line: str) -> bool:
    """Whether `line` of a key-facts section is one `KeyFactLines` writes, which reads
    back as itself when taken whole (`_summary_line`): "- " and words with a fact in
    them, the assistant's as they are or the user's quoted after the user's label (in
    either language)."""
    if not line.startswith("- ") or line != line.strip() or not facts_of(line):
        return False
    match = QUOTED.fullmatch(line)
    if match is None:
        return _QUOTE_OPENS.match(line) is None
    return match["who"] in _SAID


def _section_start(text: str) -> int:
    """Where the key-facts section of a summary begins (past its heading); -1 if none."""
    at = [text.find(f"{h}\n") for h in KEY_FACTS_HEADING.values()]
    found = [i for i in at if i == 0 or (i > 0 and text[i - 1] == "\n")]
    return min(found) if found else -1


def _summary_line(text: str, position: int, section: int) -> tuple[str, tuple[int, int] | None]:
    """Who said the words at `position` of a summary, and where they are when they are a
    line of its key-facts section (at `section`, -1 if none; a line taken whole reads the
    same fold after fold, whatever words it was cut with): who its line quotes, or the
    assistant for a section line that quotes no one (the assistant's words, and
    `render_fact`'s lines); "" for anything else (a model's prose)."""
    start = text.rfind("\n", 0, position) + 1
    stop = text.find("\n", position)
    stop = len(text) if stop < 0 else stop
    listed = 0 <= section < start
    match = _QUOTE_OPENS.match(text, start)
    if match is not None:
        who = SPEAKERS.get(match["who"], "") if match.end() <= position else ""
        closes = max(text.rfind(mark, match.end(), stop) for mark in "»”")
        whole = (match.end(), closes) if listed and closes >= position else None
        return who, whole
    if not (listed and text.startswith("- ", start)):
        return "", None
    return ASSISTANT, (start + 2, len(text[:stop].rstrip()))


def _around(text: str, start: int, end: int) -> tuple[int, int]:
    """Where `text[start:end]` with up to `CONTEXT_BEFORE` content words before and
    `CONTEXT_AFTER` after, within its clause, begins and ends: the function words
    between come along ("teléfono es el +34 …", "jueves 21 por la tarde"), none at
    either end; a word glued to the value comes with it and does not count."""
    begin = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    stop = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
    before = list(_TOKEN.finditer(text, begin, start))
    after = list(_TOKEN.finditer(text, end, stop))
    first, last = start, end
    if before and before[-1].end() == start:
        first = before.pop().start()
    if after and after[0].start() == end:
        last = after.pop(0).end()
    first = _reach(reversed(before), first, lambda m: m.start(), CONTEXT_BEFORE)
    last = _reach(after, last, lambda m: m.end(), CONTEXT_AFTER)
    return first, last


def _reach(
    words: Iterable[re.Match[str]], edge: int, at: Callable[[re.Match[str]], int], left: int
) -> int:
    """The far edge of the first `left` content words of `words` (in reading order away
    from the value), past the function words between them."""
    for word in words:
        if left == 0:
            break
        if _content(word.group()):
            edge, left = at(word), left - 1
    return edge


@lru_cache(maxsize=4096)
def _content(word: str) -> bool:
    folded = fold(word.strip(".,;:!?¿¡'’"))
    return any(c.isalnum() for c in folded) and folded not in RECALL_STOP_WORDS
