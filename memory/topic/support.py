"""The support profile's case rules: when a message inside an open case is still the case.

A support chat is one case at a time. A by-the-way question, an aside, thanks that do not
close the case, a follow-up with another domain's word (an email, a payment) all belong
to it. A reset needs either the case closed (before the message, or at the start of it:
"eso es todo; ahora quería…"), or a new subject with nothing tying it to the open case
(no shared fact: an order number, an amount, a phone) after an explicit change ("otro
asunto", "unrelated"), or a return after a long silence with a new problem.

`case_rules` returns None when none of these decides; the word-score rules decide then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Literal

from memory.caches import WINDOW_TEXTS
from memory.facts import Fact, facts_of
from memory.topic.context import TopicContext
from memory.topic.cues import BACK_REFERENCES, CLOSURE, CONTRAST
from memory.topic.text import phrase_candidates, phrase_hits, sentences, term_set, words

# A gap this long before the message makes it a return (a new day), not the next line.
RETURN_GAP = timedelta(hours=16)

# "By the way…": a question on the side of the case, never a new case on its own.
SIDE_QUESTION = (
    "por cierto",
    "ya que estamos",
    "de paso",
    "una duda rapida",
    "pregunta rapida",
    "una pregunta aparte",
    "por curiosidad",
    "aprovechando",
    "by the way",
    "btw",
    "quick question",
    "while i have you",
    "out of curiosity",
    "oh and",
)
# The user says the subject is different.
STRONG_CHANGE = (
    "otro asunto",
    "otro tema",
    "cambiando de tema",
    "cambio de tema",
    "totalmente distinta",
    "totalmente distinto",
    "totalmente diferente",
    "otra cosa distinta",
    "otra cosa diferente",
    "algo distinto",
    "algo diferente",
    "consulta distinta",
    "consulta diferente",
    "problema distinto",
    "problema diferente",
    "nuevo problema",
    "nueva consulta",
    "por otro lado",
    "unrelated",
    "totally different",
    "completely different",
    "something else entirely",
    "different topic",
    "change of subject",
    "changing the subject",
    "on another note",
    "new issue",
    "separate issue",
    "different issue",
    "different question",
    "different thing",
    "another issue",
)
# A new request that may or may not be about the case: decided by what ties it.
NEW_PROBLEM = (
    "otra cosa",
    "otra consulta",
    "otra pregunta",
    "ahora queria",
    "ahora quiero",
    "ahora tengo",
    "tengo un problema",
    "tengo una queja",
    "queria quejarme",
    "quiero quejarme",
    "tambien queria",
    "another question",
    "another thing",
    "i have a problem",
    "im having a problem",
    "now i have",
    "i also wanted",
)


@dataclass(frozen=True, slots=True)
class CaseReading:
    side_question: tuple[str, ...]
    strong_change: tuple[str, ...]
    new_problem: tuple[str, ...]
    closed_in_message: bool
    shared_facts: int
    shared_terms: int
    returned: bool
    refers_back: bool

    def signals(self) -> dict[str, object]:
        return {
            "side_question_cues": list(self.side_question),
            "strong_change_cues": list(self.strong_change),
            "new_problem_cues": list(self.new_problem),
            "closed_in_message": self.closed_in_message,
            "shared_facts": self.shared_facts,
            "shared_terms": self.shared_terms,
            "returned_after_gap": self.returned,
            "refers_back": self.refers_back,
        }


def read_case(ctx: TopicContext) -> CaseReading:
    episode = (ctx.summary, *(t for e in ctx.window for t in (e.user_text, e.reply_text)))
    gap = ctx.now - ctx.last_activity if ctx.last_activity is not None else timedelta(0)
    return CaseReading(
        side_question=tuple(phrase_hits(ctx.message, SIDE_QUESTION)),
        strong_change=tuple(phrase_hits(ctx.message, STRONG_CHANGE)),
        new_problem=tuple(phrase_hits(ctx.message, NEW_PROBLEM)),
        closed_in_message=closes_then_moves_on(ctx.message),
        shared_facts=shared_fact_count(ctx.message, episode),
        shared_terms=_shared_terms(ctx.message, episode),
        returned=gap >= RETURN_GAP,
        refers_back=bool(BACK_REFERENCES.intersection(words(ctx.message))),
    )


Action = Literal["continue", "reset"]


def case_rules(r: CaseReading, family_changed: bool) -> tuple[Action, str] | None:
    """(action, reason) when a case rule decides; None to leave it to the word score."""
    tied = r.shared_facts > 0
    if r.closed_in_message:
        return "reset", "case_closed"
    if r.strong_change and not tied:
        return "reset", "new_subject"
    if r.side_question and not r.strong_change:
        return "continue", "side_question"
    if r.returned:
        # A return opens a new case only with a new problem ("ahora tengo una queja") or
        # a message sharing no word with the case in another intent.
        fresh = r.new_problem or (family_changed and r.shared_terms == 0 and not r.refers_back)
        if fresh and not tied:
            return "reset", "returned_new_subject"
        return "continue", "same_case"
    if tied:
        return "continue", "same_case"
    if r.new_problem and family_changed and r.shared_terms <= 1:
        return "reset", "intent_changed"
    return None


@lru_cache(maxsize=4096)
def closes_then_moves_on(message: str) -> bool:
    """ "Eso es todo con la contraseña. Ahora quería…": a closing phrase in an early
    sentence, then a sentence with words of its own. A sentence's words are words of the
    message, so a message without every word of some closing phrase has no closing
    sentence: most messages are answered by their cached words, not a reading of each
    sentence."""
    if not phrase_candidates(message, CLOSURE):
        return False
    parts = sentences(message)
    for i, part in enumerate(parts[:-1]):
        if phrase_hits(part, CLOSURE) and not phrase_hits(part, CONTRAST):
            rest = " ".join(parts[i + 1 :])
            return len(term_set(rest) - term_set(part)) >= 3
    return False


@lru_cache(maxsize=4096)
def fact_values(text: str) -> frozenset[str]:
    """The values the topic check counts as the text's facts: times aside, and what
    the fact guard keeps but the topic model was not fitted with (its features keep the
    readings it learnt from): a name of one word ("via Evri"), a count ("2 adults")."""
    return frozenset(f.value.casefold() for f in facts_of(text) if _counted(f))


def _counted(fact: Fact) -> bool:
    if fact.kind in ("time", "count"):
        return False
    return not (fact.kind == "named" and " " not in fact.value)


def shared_fact_count(message: str, texts: tuple[str, ...]) -> int:
    """How many of the message's facts (times aside) the texts also have, by value.

    A fact's value is an exact substring of its text (`memory.facts`), and case folding
    goes character by character, so a text whose folded form holds none of the values
    still unaccounted for cannot add one: its facts are never extracted. The shortest
    texts go first, so the long summary is read only for a value nothing else gave.
    Most replies, and the whole episode when the message has no facts, cost a substring
    test instead of the patterns; the count is the same as extracting every text.
    """
    wanted = fact_values(message)
    if not wanted:
        return 0
    shared: set[str] = set()
    for text in sorted(texts, key=len):
        left = [value for value in wanted if value not in shared]
        if not left:
            break
        folded = _casefolded(text)
        if any(value in folded for value in left):
            shared |= wanted & fact_values(text)
    return len(shared)


@lru_cache(maxsize=WINDOW_TEXTS)
def _casefolded(text: str) -> str:
    """Cached: the summary and the window's texts are searched for the message's values
    every turn a message has facts."""
    return text.casefold()


def _shared_terms(message: str, texts: tuple[str, ...]) -> int:
    """How many terms of the message any of the texts has: what is left of the message's
    terms after taking away each text's (cached) set, not a union of them all."""
    mine = term_set(message)
    return len(mine) - len(mine.difference(*map(term_set, texts)))
