"""Whether an automatic reset reverts: the new message continues the case it closed.

Pure, like `memory.policy`. One of the first `REVERT_WITHIN` user messages after an
automatic reset reverts it (as `/undo` does, before the turn's context is built) when it
continues the previous case more than the new episode:

- `shared_facts`: it mentions more of the previous case's facts (a ticket number, an
  IP) than hard values (ids, amounts) that only the new episode has said;
- `shared_terms`: it shares `MIN_SHARED_TERMS` or more of the case's terms that the user
  has not said in the new episode, and more of them than terms of the user's new
  messages the case never used;
- `answers_question`: the previous episode's last reply ended with a question, and the
  message takes up that question's words (more than the new episode's), or is a short
  yes or no while the new episode has asked nothing;
- `continuation_cue`: it says the old case goes on ("lo mismo", "sigue igual",
  "still", "del mismo tema") and shares no more with the new episode than with the
  previous case; or it refers back to one of the case's words as already known ("lo de
  la fibra", "the dns thing"), a word the user has not said in the new episode, and
  names no identifier of its own.

After those messages, for as long as the new episode keeps the case it closed, one
branch still reverts: a message naming, said whole, more of that case's identifiers (a
ticket, an order, an IP, a tracking number: `CASE_ID_KINDS`) than identifiers of its own
("lo del NB-448213 sigue igual", twenty messages on). A wrong reset that stood undoes
itself as soon as the user names the case again.

- `reply_names_case`: at any time, the bot's last reply in the new episode names more of
  those identifiers than identifiers of its own ("cierro la avería AV-5561093"): the
  conversation is about the old case, even when the user only says "gracias".

A manual reset (`/reset`) never reverts; a first episode has nothing to revert to.

`decide_veto` reads the reset's own message the same way, with the two strongest
branches only: a message that names more of the case it would close than facts of its
own, says with a cue that the case goes on about one of its terms, or refers back to one
of them ("pero lo del agua no me lo habéis descontado") without an identifier of its own
("lo de la fibra ya está; ahora el pedido 7781" is a new case), continues that case,
and the reset is not made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memory.facts import facts_of
from memory.recall.terms import hard_terms, terms
from memory.soft_reset.block import MIN_SHARED_TERMS
from memory.soft_reset.case import mentioned
from memory.text.fold import fold
from memory.types import Exchange, PreviousCase

REVERT_WITHIN = 3  # user messages after the reset (the reset's own not counted)
# What a case is looked up by and no other case shares; after `REVERT_WITHIN` messages
# only a message naming these reverts.
CASE_ID_KINDS = frozenset({"id", "account", "card", "iban", "ip", "host", "tracking", "plate"})
SHORT_ANSWER = 8  # words: "sí, ya lo reinicié" answers; a paragraph is a new subject
RevertReason = Literal[
    "shared_facts", "shared_terms", "continuation_cue", "answers_question", "reply_names_case"
]

# Folded (lower case, no accents). Only phrases that, right after a reset, say the old
# case goes on.
_CUES = (
    "lo mismo", "sigue igual", "sigo igual", "igual que antes", "sigue sin", "sigo sin",
    "sigue fallando", "sigue pasando", "sigue dando", "sigue apareciendo", "todavia",
    "aun no", "aun sigue", "aun me", "aqui sigo", "lo de antes", "como te decia",
    "still", "same issue", "same problem", "same error", "same thing", "as before",
    "no change", "nothing changed", "keeps happening", "as i said",
    # the user says it is the same subject ("otra cosa del mismo tema")
    "mismo tema", "mismo asunto", "same topic", "same subject",
    # it happened again: the same trouble back after a pause ("me ha vuelto a pasar")
    "vuelto a pasar", "vuelve a pasar", "volvio a pasar", "pasado otra vez",
    "pasa otra vez", "pasado de nuevo", "pasa de nuevo", "happened again",
    "happening again",
)  # fmt: skip
_CUE = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in _CUES) + r")\b")
# A word said as something already talked about ("lo del agua", "lo de la factura",
# "the refund thing"): folded text, the word in its group.
_BACK = re.compile(r"\blo de(?:l| la| las| los)? (\w+)|\bthe (\w+) (?:thing|stuff|issue)\b")
_YES_NO = re.compile(r"^\W*(?:si|no|yes|yep|yeah|nope|correct[oa]?|exact[oa]?|right)\b")


@dataclass(frozen=True, slots=True)
class RevertCheck:
    """What the rule looks at: the new message, the case the reset closed, and the new
    episode (how it was opened, its exchanges so far, how many messages it holds)."""

    message: str
    previous: PreviousCase | None
    opened_by: str | None
    episode: Sequence[Exchange]  # the new episode's exchanges at hand, oldest first
    since_reset: int  # the new episode's messages before this one


@dataclass(frozen=True, slots=True)
class Revert:
    reason: RevertReason
    shared: tuple[str, ...]  # what tied the message to the previous case

    def signals(self) -> dict[str, object]:
        """What the turn's topic decision records."""
        return {
            "reset_reverted": True,
            "reset_revert_reason": self.reason,
            "reset_revert_shared": list(self.shared),
        }


def decide_revert(check: RevertCheck) -> Revert | None:
    """The revert, with its reason, or None: the reset stands (for this message)."""
    previous = check.previous
    if previous is None or not (check.opened_by or "").startswith("auto:"):
        return None
    if check.since_reset > REVERT_WITHIN:
        return _by_case_ids(check.message, previous) or _by_reply(check, previous)
    return _by_facts(check, previous) or _by_words(check, previous) or _by_reply(check, previous)


def _by_case_ids(message: str, previous: PreviousCase) -> Revert | None:
    """Later on, only the strongest tie: the message names, said whole, more of the
    previous case's identifiers (`CASE_ID_KINDS`) than identifiers of its own. Two
    different cases of one user share amounts, dates, the user's name and contacts, but
    not a ticket, an order, an IP or a tracking number (on the written long cases, read
    pairwise: 0 of 180 pairs of different cases, 71 of 120 false resets within one)."""
    ids = tuple(fact for fact in previous.facts if fact[0] in CASE_ID_KINDS)
    found = _names_more(ids, message)
    return None if found is None else Revert("shared_facts", found)


def _by_reply(check: RevertCheck, previous: PreviousCase) -> Revert | None:
    """The bot's last reply in the new episode names, said whole, more of the closed
    case's identifiers than identifiers of its own ("cierro la avería AV-5561093"): the
    conversation went on about that case, whatever the user's words were."""
    if not check.episode:
        return None
    ids = tuple(fact for fact in previous.facts if fact[0] in CASE_ID_KINDS)
    found = _names_more(ids, check.episode[-1].reply_text)
    return None if found is None else Revert("reply_names_case", found)


def _names_more(facts: Sequence[tuple[str, str]], message: str) -> tuple[str, ...] | None:
    """The values of `facts` that `message` names said whole, when they outnumber the
    message's own facts of those kinds; else None. A digit run shared by two order
    numbers ("112-4470913", "112-4491122") is no mention of the old one."""
    old = mentioned(facts, message, runs=False)
    if not old:
        return None
    kinds = {kind for kind, _ in facts}
    own = [f for f in facts_of(message) if f.kind in kinds]
    new = [f for f in own if not mentioned(facts, f.value, runs=False)]
    return old if len(old) > len(new) else None


def _by_facts(check: RevertCheck, previous: PreviousCase) -> Revert | None:
    old = mentioned(previous.facts, check.message)
    if not old:
        return None
    # The new episode's own hard tokens (an order id, an amount) the message repeats.
    own = {t for ex in check.episode for t in hard_terms(_texts(ex))}
    case = {t for _, value in previous.facts for t in hard_terms(value)}
    new = (hard_terms(check.message) & own) - case
    return Revert("shared_facts", old) if len(old) > len(new) else None


def _by_words(check: RevertCheck, previous: PreviousCase) -> Revert | None:
    words = frozenset(terms(check.message))
    # The user's own words in the new episode: the bot's replies there may well talk
    # about the old case (its facts ride along), which says nothing against it.
    own = frozenset(t for ex in check.episode for t in terms(ex.user_text))
    case = frozenset(previous.terms)
    old, new = (words & case) - own, (words & own) - case
    answered = _answers(check, previous, words, own, len(new))
    shared = len(old) >= MIN_SHARED_TERMS and len(old) > len(new)
    # Named for what explains the overlap: the old question's words, or the case's.
    if answered is not None and (not shared or len(answered.shared) >= len(old) / 2):
        return answered
    if shared:
        return Revert("shared_terms", tuple(sorted(old)))
    cue = _CUE.search(fold(check.message))
    if cue is not None and len(new) <= len(old):
        return Revert("continuation_cue", (cue.group(0),))
    back = back_reference(check.message, [t for t in previous.terms if t not in own])
    if not back or _new_ids(check.message, previous):
        return None
    return Revert("continuation_cue", back)


def _answers(
    check: RevertCheck,
    previous: PreviousCase,
    words: frozenset[str],
    own: frozenset[str],
    new: int,
) -> Revert | None:
    if not previous.question:
        return None
    taken = (words & frozenset(terms(previous.question))) - own
    if taken and len(taken) > new:
        return Revert("answers_question", tuple(sorted(taken)))
    short = len(check.message.split()) <= SHORT_ANSWER
    asked = any("?" in ex.reply_text for ex in check.episode)
    if short and not asked and new == 0 and _YES_NO.search(fold(check.message)):
        return Revert("answers_question", (previous.question,))
    return None


def _texts(ex: Exchange) -> str:
    return f"{ex.user_text}\n{ex.reply_text}"


def decide_veto(message: str, closing: PreviousCase) -> Revert | None:
    """Whether a reset the topic check decided for `message` is taken back at once: the
    message itself names more of the case it would close (`closing`, as the reset would
    keep it) than facts of its own ("back again about CS-901233"), or says that case goes
    on (a continuation cue) about one of its terms ("still on the checkout thing").
    Shared words alone are too weak on the reset's own message: a new case shares some."""
    # Values said whole, against the message's own facts of any kind.
    old = mentioned(closing.facts, message, runs=False)
    new = [f for f in facts_of(message) if not mentioned(closing.facts, f.value, runs=False)]
    if old and len(old) > len(new):
        return Revert("shared_facts", old)
    back = back_reference(message, closing.terms)
    if back and not _new_ids(message, closing):
        return Revert("continuation_cue", back)
    # A cue says the case goes on only about something of it ("still on the checkout
    # thing"); "¿todavía abre la tienda?" after a router case is a new subject.
    cue = _CUE.search(fold(message))
    if cue is None or not frozenset(terms(message)).intersection(closing.terms):
        return None
    return Revert("continuation_cue", (cue.group(0),))


def _new_ids(message: str, case: PreviousCase) -> bool:
    """The message names identifiers (`CASE_ID_KINDS`) of its own the case does not
    hold: "lo del ticket #4821 ya está; ahora el pedido 7781" is about a new order."""
    return any(
        f.kind in CASE_ID_KINDS and not mentioned(case.facts, f.value, runs=False)
        for f in facts_of(message)
    )


def back_reference(message: str, case_terms: Sequence[str]) -> tuple[str, ...]:
    """The phrases of `message` that refer back to something of the case ("lo del agua"
    after a case about the water bill, "the refund thing"): a word the case's terms hold,
    said as already known."""
    case = frozenset(case_terms)
    return tuple(
        found.group(0)
        for found in _BACK.finditer(fold(message))
        if case.intersection(terms(found.group(1) or found.group(2)))
    )
