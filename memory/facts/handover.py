"""Facts one process of ours read, handed to another: the loop gives the fold worker the
facts of the messages it folds, which its topic check and recall read when they came in,
so the worker does not read them again (issue 29). Only what `facts_of` answered travels,
and `facts_of` takes it as its own answer: the same either way.

Only texts read here lately are given (`to_give` never reads one): a fold of messages
the loop never read (a rebuild, topic and recall off) leaves their reading to the worker.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory.caches import FOLD_TEXTS
from memory.facts.rules import Fact, FactKind

READ_MAX = FOLD_TEXTS  # as many as `facts_of` keeps
# Plain tuples: a dataclass is unpickled field by field in Python, a tuple is not.
Given = tuple[tuple[str, tuple[tuple[FactKind, str, str], ...]], ...]

_read: dict[str, tuple[Fact, ...]] = {}  # the texts read here lately, oldest first
_given: dict[str, tuple[Fact, ...]] = {}  # handed over, until `forget_given`


def note_read(text: str, facts: tuple[Fact, ...]) -> None:
    """`facts_of` read `text` (or took it as given)."""
    _read[text] = facts
    if len(_read) > READ_MAX:
        del _read[next(iter(_read))]


def to_give(texts: Iterable[str]) -> Given:
    """The facts of those of `texts` read here lately, to hand to another process."""
    return tuple(
        (text, tuple((f.kind, f.value, f.label) for f in facts))
        for text in dict.fromkeys(texts)
        if (facts := _read.get(text)) is not None
    )


def give(given: Given) -> None:
    """Facts another process read (`to_give`), answered by `facts_of` as read here."""
    _given.update((text, tuple(Fact(*fact) for fact in facts)) for text, facts in given)


def taken(text: str) -> tuple[Fact, ...] | None:
    """The facts given for `text`, if any (each is taken once: `facts_of` caches it)."""
    return _given.pop(text, None) if _given else None


def forget_given() -> None:
    """Drop what was given and not asked for (the worker, after each fold)."""
    _given.clear()
