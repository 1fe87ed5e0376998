"""A recalled exchange's side cut to what the new message is about.

Pure. A side of several sentences keeps those that hold a term the search matched or a
hard fact (the fact guard's values: an id, a date, an amount, a name given), in order;
each run of the others becomes one `[…]`. A side where no sentence, or every sentence,
holds a matched term stays whole: a side that did not match is context for the one that did (the
reply to a question, the question a reply answers). On TIAGE train-built chats this kept
every answer and cut the block by about 50 tokens a question (`docs/benchmarks.md`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from memory.facts import extract_facts
from memory.recall.terms import hard_terms, terms

GAP = "[…]"
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")


def trimmed(text: str, matched: Collection[str]) -> str:
    """`text` with its sentences that hold none of `matched` (search terms) and no hard
    fact replaced, each run of them, by `GAP`; whole when none or all hold a term."""
    return _trimmed(text, frozenset(matched))


@lru_cache(maxsize=4096)
def _trimmed(text: str, matched: frozenset[str]) -> str:
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) < 2:
        return text
    keep = [not matched.isdisjoint(terms(s)) for s in sentences]
    if all(keep) or not any(keep):
        return text
    # The fact guard reads the side only when it is cut (the costly step, so not per turn).
    values = [f.value.lower() for f in extract_facts(text)]
    out: list[str] = []
    for sentence, kept in zip(sentences, keep, strict=True):
        if kept or _holds_fact(sentence, values):
            out.append(sentence)
        elif not out or out[-1] != GAP:
            out.append(GAP)
    return " ".join(out)


def _holds_fact(sentence: str, values: list[str]) -> bool:
    if hard_terms(sentence):
        return True
    lowered = sentence.lower()
    return any(value in lowered for value in values)
