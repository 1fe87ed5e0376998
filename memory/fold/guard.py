"""The fact guard: accept or reject a new summary, restore lost facts, hold it under its cap.

Pure: text and facts in, a `GuardResult` out. Also home of the line valuation and trimming
both the guard and the extractive summarizer use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory.caches import FOLD_TEXTS
from memory.facts import Fact, dedupe, extract_facts, missing_facts
from memory.fold.inwords import KEY_FACTS_HEADING, SUMMARY, KeyFactLines, in_words
from memory.fold.keyfacts import RENDER_LANGUAGES, cap_key_facts, render_fact, salient_facts
from memory.noise import text_noise

CountTokens = Callable[[str], int]

# A new cumulative summary shorter than this share of the previous one lost content.
MIN_SHARE_OF_PREVIOUS = 0.3
# And it must be at least this many tokens, or a tenth of what was folded if that is less.
MIN_TOKENS = 24
MIN_SHARE_OF_SOURCE = 0.1
# The key-facts section may take at most this share of the cap when the body is too long.
KEY_FACTS_RESERVE = 0.25
# The key-facts section's own cap: however short the body, it never takes more than this
# share of the summary cap; past it the least valuable facts go (incidental first).
KEY_FACTS_SHARE = 0.5
SECTION_SLACK = 4  # tokens: a joined text may count a little more than its parts
TRIM_ROUNDS = 4

_CUES = re.compile(
    r"(?i)\b(?:confirm\w*|acord\w*|decid\w*|aprob\w*|approv\w*|agreed|agree|acept\w*|accept\w*"
    r"|rechaz\w*|reject\w*|cancel\w*|reembols\w*|refund\w*|devoluci\w*|return\w*|env[ií]\w*"
    r"|ship\w*|send|sent|solicit\w*|request\w*|program\w*|schedul\w*|agend\w*|book\w*"
    r"|reserv\w*|pendiente\w*|pending|compromet\w*|commit\w*|promet\w*|promis\w*"
    r"|prob[eéóa]\w*|tried|try|intent\w*"
    r"|funcion\w*|work\w*|fall[aó]\w*|fail\w*|error\w*|resuelt\w*|resolv\w*|solucion\w*|fix\w*"
    r"|arregl\w*|pag\w*|pay\w*|paid|cobr\w*|charg\w*|factur\w*|invoic\w*|plazo\w*|deadline"
    r"|vence\w*|due|quedamos|we'll|i'll|will|vamos a|voy a|te (?:enviar|llamar|escribir)\w*"
    r"|siguiente paso|next step\w*|estado|status|necesit\w*|need\w*|quier\w*|want\w*"
    r"|cambi\w*|chang\w*|modific\w*|sustitu\w*|replac\w*)\b"
)
_FACT_WEIGHT = {"id": 3, "email": 3, "phone": 3, "postcode": 3, "amount": 3, "date": 2, "url": 2}
MAX_FACTS_VALUE = 9
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


@dataclass(frozen=True, slots=True)
class GuardResult:
    """`text` is the summary to store (the previous one when rejected).

    `missing_after`: required facts the draft itself lacked (appended or dropped).
    `dropped`: required facts absent from the final text (they did not fit the cap).
    """

    text: str
    missing_after: tuple[Fact, ...]
    dropped: tuple[Fact, ...]
    ok: bool
    reject_reason: str | None = None


def guard_summary(
    draft_text: str,
    *,
    required: Sequence[Fact],
    previous_text: str,
    language: str,
    cap_tokens: int,
    count_tokens: CountTokens,
    source_tokens: int = 0,
    pinned: frozenset[Fact] = frozenset(),
    sources: Sequence[tuple[str, str]] = (),
) -> GuardResult:
    """Reject bad drafts; append missing facts under a key-facts heading; fit `cap_tokens`.

    A draft that already ends in a key-facts list (the extractive summarizer writes one)
    has that list taken apart and written again with the missing facts: the list is
    capped as a whole, by priority, and trimming the body never cuts its heading off.
    A fact's line gives it in the words it was given (`KeyFactLines`) in the draft, the
    previous summary or `sources` (the folded texts and who wrote each), in that order."""
    draft = draft_text.strip()
    required = dedupe(required)
    heading = KEY_FACTS_HEADING.get(language[:2], KEY_FACTS_HEADING["en"])
    render = KeyFactLines(((draft, SUMMARY), (previous_text, SUMMARY), *sources), language)
    # Facts the guard puts back count toward the length: a draft that restated the
    # previous summary more briefly and only left facts for the guard lost nothing.
    lacked = missing_facts(required, draft)
    bare = KeyFactLines((), language)  # at the least, each fact as `render_fact` writes it
    restored = _section_cost(lacked, heading, count_tokens, bare) if draft else 0
    reason = reject_reason(draft, previous_text, count_tokens, source_tokens, restored)
    if reason is not None:
        return GuardResult(previous_text, (), (), ok=False, reject_reason=reason)
    body, listed = split_fact_list(draft, heading)
    missing = dedupe([*listed, *unsaid(required, body)])
    # Trimming the body to make room can take more facts with it, so size the room again
    # until the section fits (never more than KEY_FACTS_RESERVE of the cap).
    reserve = 0
    for _ in range(TRIM_ROUNDS):
        section = _section_tokens(missing, heading, count_tokens, render)
        over = count_tokens(body) + section - cap_tokens
        if over > 0 and render.shed(missing, over, count_tokens, pinned):  # before the body
            section = _section_tokens(missing, heading, count_tokens, render)
            over = count_tokens(body) + section - cap_tokens
        if over <= 0 or reserve >= cap_tokens * KEY_FACTS_RESERVE:
            break
        reserve = min(max(reserve, section), int(cap_tokens * KEY_FACTS_RESERVE))
        body = "\n".join(trim_lines(body.splitlines(), cap_tokens - reserve, count_tokens))
        missing = dedupe([*listed, *unsaid(required, body)])
    text, dropped = _append_key_facts(
        body, missing, heading, cap_tokens, count_tokens, pinned, render
    )
    if not text.strip():  # a cap too small for anything at all
        return GuardResult(previous_text, (), (), ok=False, reject_reason="empty")
    needed, given = set(required), set(listed)
    restored_facts = tuple(f for f in missing if f in needed and f not in given)
    return GuardResult(text, restored_facts, tuple(f for f in dropped if f in needed), ok=True)


def unsaid(required: Sequence[Fact], body: str) -> list[Fact]:
    """The required facts `body` does not say so that the next fold reads them back: not
    there at all, or there only where no pattern finds them (an address the summary
    restated without its label, an IPv6 kept only inside an SPF record). The next fold
    requires what it reads in the summary, so a fact said only so would be kept this
    once and then lost; it goes under key facts instead. Compared by value, case and
    spaces aside: a value read back as another kind is still required next time."""
    absent = missing_facts(required, body)
    if len(absent) == len(required):
        return absent
    read = {_squash(f.value) for f in salient_facts(body)}
    gone = set(absent)
    return [f for f in required if f in gone or _squash(f.value) not in read]


def _squash(value: str) -> str:
    return "".join(value.casefold().split())


def split_fact_list(text: str, heading: str) -> tuple[str, list[Fact]]:
    """(body, facts) when `text` ends in a key-facts list under `heading` whose every line
    is one rendered fact (in any language's words) or facts in the words they were given
    (`KeyFactLines`: the line is what its facts render as from the line itself); (text,
    []) otherwise (a list with prose in it stays as it is)."""
    before, found, after = ("\n" + text).rpartition("\n" + heading + "\n")
    if not found:
        return text, []
    facts: list[Fact] = []
    for line in after.splitlines():
        if not line.strip():
            continue
        line = line.strip()
        extracted = extract_facts(line)
        if len(extracted) == 1 and _rendered(extracted[0], line):
            facts.append(extracted[0])
        elif in_words(line):
            facts.extend(extracted)
        else:
            return text, []
    return before[1:].rstrip(), facts


def _rendered(fact: Fact, line: str) -> bool:
    return any(render_fact(fact, language) == line for language in RENDER_LANGUAGES)


def reject_reason(
    body: str,
    previous_text: str,
    count_tokens: CountTokens,
    source_tokens: int = 0,
    restored_tokens: int = 0,
) -> str | None:
    """Why a draft is unusable: empty, error-like or implausibly short; None if fine.
    `restored_tokens`: what the guard will append to it (missing facts)."""
    if not body.strip():
        return "empty"
    noise = text_noise(body)
    if noise is not None:
        return f"error_like:{noise}"
    tokens = count_tokens(body) + restored_tokens
    floor = min(MIN_TOKENS, int(source_tokens * MIN_SHARE_OF_SOURCE))
    if previous_text.strip():
        floor = max(floor, int(count_tokens(previous_text) * MIN_SHARE_OF_PREVIOUS))
    return "too_short" if tokens < floor else None


def _section_tokens(
    facts: Sequence[Fact], heading: str, count_tokens: CountTokens, render: KeyFactLines
) -> int:
    """What the section may take, newlines and slack included."""
    return _section_cost(facts, heading, count_tokens, render) + len(facts) + SECTION_SLACK


def _section_cost(
    facts: Sequence[Fact], heading: str, count_tokens: CountTokens, render: KeyFactLines
) -> int:
    if not facts:
        return 0
    lines = sum(count_tokens(render(f)) + 1 for f in facts)
    return count_tokens(heading) + lines + 2


def _append_key_facts(
    body: str,
    missing: Sequence[Fact],
    heading: str,
    cap: int,
    count_tokens: CountTokens,
    pinned: frozenset[Fact],
    render: KeyFactLines,
) -> tuple[str, list[Fact]]:
    if not missing:
        return body, []
    prefix = body if _ends_with_section(body, heading) else f"{body}\n\n{heading}".lstrip()
    room = cap - count_tokens(prefix)
    own_cap = int(cap * KEY_FACTS_SHARE) - count_tokens(heading)

    def line_cost(line: str) -> int:
        return count_tokens(line) + 1  # its newline

    language = render.language
    kept, dropped = cap_key_facts(missing, min(room, own_cap), line_cost, pinned, language, render)
    while kept:
        text = "\n".join([prefix, *render.lines(kept)])
        if count_tokens(text) <= cap:
            return text, [f for f in missing if f in dropped]
        # Token counts of the joined text can exceed the sum of the parts: shave one more.
        current = sum(count_tokens(render(f)) for f in kept)
        kept, more = cap_key_facts(kept, current - 1, count_tokens, pinned, language, render)
        dropped = [*dropped, *more]
    return body, list(missing)


def _ends_with_section(body: str, heading: str) -> bool:
    """True when the body's last block already is a key-facts list under `heading`."""
    for line in reversed(body.splitlines()):
        if not line.strip().startswith("- "):
            return line.strip() == heading
    return False


def line_value(text: str, known: Collection[str] = ()) -> int:
    """How much a summary line or sentence is worth keeping: facts, decisions, questions.

    Facts count by kind: what the case hangs on (ids, contact details, money) more than a
    date, and a date more than the times and percentages repeated everywhere. Facts whose
    casefolded value is in `known` (an earlier line gave them) count nothing."""
    facts = [f for f in extract_facts(text) if f.value.casefold() not in known]
    value = min(sum(fact_weight(f) for f in facts), MAX_FACTS_VALUE)
    return value + _cue_points(text)


@lru_cache(maxsize=FOLD_TEXTS)
def _cue_points(text: str) -> int:
    """Decision or commitment words, and a question (cached: lines come back every fold)."""
    return (2 if _CUES.search(text) else 0) + (1 if "?" in text else 0)


def fact_weight(fact: Fact) -> int:
    """A fact's worth in `line_value`: 3 for ids, contacts and amounts, 2 for dates and
    URLs (and an id that is a bare number), 1 for times and percentages."""
    if fact.kind == "id" and fact.value.isdigit():
        return 2
    return _FACT_WEIGHT.get(fact.kind, 1)


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of `text`, stripped, empty ones left out."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def trim_lines(
    lines: Sequence[str],
    cap: int,
    count_tokens: CountTokens,
    values: Sequence[float] | None = None,
    *,
    split: bool = True,
) -> list[str]:
    """Drop the least valuable lines (oldest first among equals) until the text fits `cap`.

    Lines longer than a quarter of the cap are cut into sentences first (unless `split` is
    off: a quoted, attributed line must stay whole), so one long paragraph is shortened
    rather than lost whole. Order is kept.
    """
    longest = cap // 4 if split else None
    units, owners, unit_values = _units(lines, longest, count_tokens, values)
    costs = [count_tokens(u) + 1 for u in units]
    alive = [True] * len(units)
    total = sum(costs)
    order = sorted(range(len(units)), key=lambda i: (unit_values[i], i))
    for index in order:
        if total <= cap and count_tokens(_join(units, owners, alive)) <= cap:
            break
        alive[index] = False
        total -= costs[index]
    return _join(units, owners, alive).splitlines()


def _units(
    lines: Sequence[str],
    longest: int | None,
    count_tokens: CountTokens,
    values: Sequence[float] | None,
) -> tuple[list[str], list[int], list[float]]:
    units: list[str] = []
    owners: list[int] = []
    unit_values: list[float] = []
    for index, line in enumerate(lines):
        long = longest is not None and count_tokens(line) > longest
        parts = split_sentences(line) if long else [line]
        for part in parts or [line]:
            units.append(part)
            owners.append(index)
            given = values[index] if values is not None else None
            unit_values.append(given if given is not None else line_value(part))
    return units, owners, unit_values


def _join(units: Sequence[str], owners: Sequence[int], alive: Sequence[bool]) -> str:
    lines: dict[int, list[str]] = {}
    for unit, owner, keep in zip(units, owners, alive, strict=True):
        if keep:
            lines.setdefault(owner, []).append(unit)
    return "\n".join(" ".join(parts) for parts in lines.values())
