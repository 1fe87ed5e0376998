"""Carry-over: the user's identity facts an automatic reset brings into the new episode.

Pure. A topic change or a long silence starts a clean episode, yet the user is still the
same person: their name, company, customer or account ids and contact details (the kinds
of `memory.facts.identity`) found in the closed episode — its user messages, and what that
episode itself had carried over — are kept with the new episode, and rendered as one small
labelled block (invariant 6: nothing else of the old conversation reaches the model).
`/reset` carries nothing; `VENTANA_RESET_CARRY=none` turns it off.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memory.blocks import CARRY_OVER_TAG, render_block
from memory.facts import IDENTITY_CARRY_KINDS, Fact, identity_facts
from memory.types import Exchange

MAX_FACTS = 12  # a block of a few lines: the latest mention of each kind comes first
Pairs = tuple[tuple[str, str], ...]

_LABELS = {
    "es": "sobre este usuario, de conversaciones anteriores; puede estar desactualizado",
    "en": "about this user, from earlier conversations; may be out of date",
}


def carried(exchanges: Iterable[Exchange], earlier: Sequence[tuple[str, str]] = ()) -> Pairs:
    """The identity facts to carry: from the closed episode's user messages (newest
    mention first within a kind), then what that episode had carried itself."""
    found = identity_facts(exchanges)
    seen = {(f.kind, f.value) for f in found}
    found += [Fact(k, v) for k, v in earlier if (k, v) not in seen and k in IDENTITY_CARRY_KINDS]
    order = {kind: i for i, kind in enumerate(IDENTITY_CARRY_KINDS)}
    ranked = sorted(enumerate(found), key=lambda p: (order[p[1].kind], p[0]))
    return tuple((f.kind, f.value) for _, f in ranked[:MAX_FACTS])


def carry_over_block(pairs: Sequence[tuple[str, str]], language: str) -> str:
    """The labelled block of the carried facts; "" when there are none."""
    if not pairs:
        return ""
    label = _LABELS.get(language, _LABELS["en"])
    body = "\n".join(f"- {kind}: {value}" for kind, value in pairs)
    return render_block(CARRY_OVER_TAG, {}, label, body)
