"""What an automatic reset keeps of the episode it closes, and what mentions it.

Pure. `previous_case` reads the closed episode's exchanges once, at the reset: its hard
facts (every kind the fact guard knows, from both sides of the conversation, the most
valuable and the latest first), the terms it is about (recall's terms, `memory.recall.
terms`: those said most often, hard facts first) and the bot's last question, when its
last reply ended asking one. `mentioned` says which of those facts a text mentions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from memory.facts import Fact, dedupe, extract_facts, missing_facts
from memory.fold.inwords import ASSISTANT, USER, KeyFactLines
from memory.fold.keyfacts import PRIORITY
from memory.recall.terms import hard_terms, terms
from memory.types import Exchange, PreviousCase

MAX_FACTS = 24  # a compact block: about 10 tokens a fact
MAX_TERMS = 64
MAX_QUESTION = 400  # characters of the bot's last question kept
RECENT = 6  # the closed episode's last exchanges whose replies' terms count too
_QUESTION = re.compile(r"[^.!\n]*\?[\s\"'»”)]*$")
_DIGIT_RUN = re.compile(r"\d{3,}")


def previous_case(
    episode_id: int,
    exchanges: Sequence[Exchange],
    last_reply: str | None,
    language: str = "es",
) -> PreviousCase:
    """The case of the episode `episode_id` (its signal exchanges, oldest first), its
    facts in the words the chat gave them written for a chat in `language`."""
    facts = case_facts(exchanges)
    return PreviousCase(
        episode_id,
        facts,
        case_terms(exchanges),
        last_question(last_reply or (exchanges[-1].reply_text if exchanges else "")),
        case_words(facts, exchanges, language),
    )


def chained(case: PreviousCase, earlier: PreviousCase) -> PreviousCase:
    """`case`, an episode an automatic reset had opened, with the case before it riding
    on: its facts and terms after the episode's own, within the caps (an older case's
    fall off as newer ones fill them). The episode a revert reopens stays `case`'s, so a
    chain of wrong resets is undone one step at a time, and no fact of the case the
    user is still on is lost to the second one."""
    seen = {value for _, value in case.facts}
    older = [n for n, (_, value) in enumerate(earlier.facts) if value not in seen]
    facts = (*case.facts, *(earlier.facts[n] for n in older))
    words = (*aligned_words(case), *(aligned_words(earlier)[n] for n in older))
    said = set(case.terms)
    kept = (*case.terms, *(t for t in earlier.terms if t not in said))
    return PreviousCase(
        case.episode_id,
        facts[:MAX_FACTS],
        kept[:MAX_TERMS],
        case.question,
        words[:MAX_FACTS] if any(words) else (),
    )


def aligned_words(case: PreviousCase) -> tuple[str, ...]:
    """`case.words`, one for each fact ("" where none: a case kept before words were)."""
    return (*case.words, *("",) * (len(case.facts) - len(case.words)))[: len(case.facts)]


def case_facts(exchanges: Sequence[Exchange]) -> tuple[tuple[str, str], ...]:
    """Every hard fact of the exchanges (the user's words before the bot's), by value:
    identifiers and contact details before amounts, dates before times; within a kind's
    rank, the latest mention first. At most `MAX_FACTS`."""
    found: list[Fact] = []
    for ex in reversed(exchanges):
        found += extract_facts(ex.user_text)
        found += extract_facts(ex.reply_text)
    latest_first = dedupe(found)
    ranked = sorted(enumerate(latest_first), key=lambda p: (-PRIORITY.get(p[1].kind, 0), p[0]))
    return tuple((f.kind, f.value) for _, f in ranked[:MAX_FACTS])


def case_words(
    facts: Sequence[tuple[str, str]], exchanges: Sequence[Exchange], language: str
) -> tuple[str, ...]:
    """Each fact in the words the chat gave it, latest first, as the key-facts section
    writes them (`KeyFactLines`: the user's quoted and labelled, the bot's as they are);
    "" for a fact no exchange gives in words that read it back."""
    sources = [
        (text, who)
        for ex in reversed(exchanges)
        for text, who in ((ex.user_text, USER), (ex.reply_text, ASSISTANT))
    ]
    lines = KeyFactLines(sources, language)
    return tuple(lines.worded(Fact(kind, value)) or "" for kind, value in facts)


def case_terms(exchanges: Sequence[Exchange]) -> tuple[str, ...]:
    """The terms the case is about: those of the user's messages (and of the latest
    replies) said in most exchanges, hard facts first; at most `MAX_TERMS`."""
    df: Counter[str] = Counter()
    last_seen: dict[str, int] = {}
    for n, ex in enumerate(exchanges):
        said = set(terms(ex.user_text))
        if n >= len(exchanges) - RECENT:
            said |= set(terms(ex.reply_text))
        df.update(said)
        last_seen.update(dict.fromkeys(said, n))
    hard = {t for ex in exchanges for t in hard_terms(ex.user_text)}
    ranked = sorted(df, key=lambda t: (t not in hard, -df[t], -last_seen[t], t))
    return tuple(ranked[:MAX_TERMS])


def last_question(reply: str) -> str:
    """The question a reply ends with ("¿Ha reiniciado el router?"), or ""."""
    found = _QUESTION.search(reply.strip())
    return found.group(0).strip()[-MAX_QUESTION:] if found else ""


def mentioned(
    facts: Iterable[tuple[str, str]], text: str, *, runs: bool = True
) -> tuple[str, ...]:
    """The values of `facts` that `text` mentions: the value itself (case and spaces
    aside), or with `runs` for a one-word value one of its digit runs ("pedido 731" for
    `order-731`)."""
    pairs = list(facts)
    if not pairs or not text:
        return ()
    missing = {f.value for f in missing_facts([Fact(k, v) for k, v in pairs], text)}
    hard = hard_terms(text) if runs else frozenset()
    return tuple(
        value
        for _, value in pairs
        if value not in missing or (runs and len(value.split()) == 1 and _runs(value) & hard)
    )


def _runs(value: str) -> set[str]:
    return set(_DIGIT_RUN.findall(value))
