"""Hard facts of a text (ids, dates, amounts, contact details, who the user is), found
deterministically in Spanish and English (DESIGN.md, Fold-in, Carry-over).

The facts of a text are computed in one place, `facts_of(text)` (cached per text), and
everything else reads them from there: the fold's guard and key-facts section, recall's
query weights, the topic heuristic, the carry-over. `extract_facts` is the same as a
fresh list. `missing_facts` says which facts a text no longer holds; `identity_facts` picks
the user's identity facts out of their messages.

Modules: `extract` (the extractor), `rules` and `kinds` (the patterns, one per kind),
`labels` (what a value is, from the words before it), `presence` (whether a text still
says a fact), `identity` (the carry-over kinds).
"""

from __future__ import annotations

from memory.facts.extract import IDENTITY_KINDS, dedupe, extract_facts, facts_of
from memory.facts.identity import IDENTITY_CARRY_KINDS, identity_facts
from memory.facts.presence import missing_facts
from memory.facts.rules import Fact, FactKind

__all__ = [
    "IDENTITY_CARRY_KINDS",
    "IDENTITY_KINDS",
    "Fact",
    "FactKind",
    "dedupe",
    "extract_facts",
    "facts_of",
    "identity_facts",
    "missing_facts",
]
