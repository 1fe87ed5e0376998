"""Reading text into words, Spanish and English: accent folding, stemming, stop words.

One set of tools, configured per use, so every reader compares words the same way and
keeps its own settings where they differ: recall (`memory.recall.terms`: the terms it
indexes and searches for) stems with `RECALL_STEMMER` (cap 7) and drops
`RECALL_STOP_WORDS`; the topic heuristic (`memory.topic.text`) stems with `TOPIC_STEMMER`
(cap 6) and drops `TOPIC_STOP_WORDS`. Each reader tokenises with its own pattern (recall
keeps hard facts such as `10.0.0.5` whole; topic keeps codes such as `#4821`).

Modules: `accents` (combining marks off, fast), `fold` (lower-case, accent-free),
`stem` (the `Stemmer` and its two configurations), `stopwords` (the two lists).
"""

from __future__ import annotations

from memory.text.accents import strip_marks
from memory.text.fold import fold
from memory.text.stem import RECALL_STEMMER, TOPIC_STEMMER, Stemmer
from memory.text.stopwords import RECALL_STOP_WORDS, TOPIC_STOP_WORDS

__all__ = [
    "RECALL_STEMMER",
    "RECALL_STOP_WORDS",
    "TOPIC_STEMMER",
    "TOPIC_STOP_WORDS",
    "Stemmer",
    "fold",
    "strip_marks",
]
