"""Long conversations made of public dialogues, and probes about what the user said in them.

The haystack is TIAGE (PersonaChat dialogues, MIT licence; `../shared/data/tiage/`): its
dialogues shuffled (seeded) and joined, `per` at a time, into one long conversation, one
dialogue a day, a few minutes between exchanges. Each dialogue is used twice, in two
conversations: once with its first speaker as the user (utterances 1, 3, 5… are the
user's, the others the assistant's), once with its second speaker as the user.

Probes are made mechanically, by a few generic templates, from what the user disclosed
about themselves ("i have two dogs", "my name is sophie", "i work as a nurse"). Each
disclosure gives three questions, asked after the conversation's last exchange:

- `persona`: the fact asked in other words where the template allows ("how many dogs do
  i own?", "what am i called?", "what do i do for a living?"); the answer is the fact's
  value ("two dogs", "sophie", "nurse");
- `about`: in the shape of long-conversation QA, "what did i tell you about my job?";
  the same answer;
- `when`: "when did i tell you about my job?"; the answer is the day it was said
  (`YYYY-MM-DD`, as the recall block dates an exchange).

Long-conversation QA asks about both speakers alike, so the other speaker's disclosures
(the assistant's lines here) are asked the same three ways in the second person
(`bot_probes`: "where is your home?", "what did you tell me about your work?").

A disclosure is kept only when its answer can be checked by a substring test: its slot
("job", "favorite color", "pets: dogs") is disclosed once in the conversation, its value
occurs in no other exchange, and it is older than the last `RECENT` exchanges (which any
window holds). No rule of the ranking was written from these probes: the templates were
written from the train split's wording, and the bench scores the dev split.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# `../shared/data/tiage` beside the checkout (or beside the folder of worktrees holding it)
DATA = next(
    (p / "shared" / "data" / "tiage" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data" / "tiage",
)
T0 = datetime(2026, 3, 2, tzinfo=UTC)
PER = 40  # dialogues a conversation: ~290 exchanges, ~10k tokens (long-conversation QA size)
RECENT = 8  # exchanges at the end whose disclosures are not probed (any window has them)
KINDS = ("persona", "about", "when")

_VALUE = r"((?:[a-z']+ ){0,2}[a-z']+)"  # one to three words, up to punctuation
_STOP = frozenset(
    (
        "and",
        "but",
        "so",
        "with",
        "because",
        "since",
        "who",
        "that",
        "which",
        "when",
        "too",
        "though",
        "or",
    )
)
_ARTICLE = r"(?:a |an |the |my )?"
_NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_KIN = "wife husband dad father mom mother son daughter brother sister boyfriend girlfriend"


@dataclass(frozen=True, slots=True)
class Template:
    """A disclosure's pattern (over a user utterance) and how its questions read."""

    pattern: re.Pattern[str]
    slot: str  # "{1}" / "{2}" filled from the groups
    persona: str
    about: str  # what the fact is about, as "what did i tell you about …?" ends
    answer: str = "{v}"  # "{v}" is the last group, trimmed at a connective


def _t(pattern: str, slot: str, persona: str, about: str, answer: str = "{v}") -> Template:
    return Template(re.compile(pattern), slot, persona, about, answer)


TEMPLATES = (
    _t(r"\bmy name is ([a-z]+)", "name", "what am i called?", "my name"),
    _t(rf"\bmy (?:favorite|fave) ([a-z]+) is {_ARTICLE}{_VALUE}", "favorite {1}",
       "which {1} do i like best?", "my favorite {1}"),
    _t(rf"\bi work (?:as|at|in|for) {_ARTICLE}{_VALUE}", "job",
       "what do i do for a living?", "my work"),
    _t(rf"\bmy job is {_ARTICLE}{_VALUE}", "job", "what do i do for a living?", "my work"),
    _t(rf"\bi live in {_ARTICLE}{_VALUE}", "home", "where is my home?", "where i live"),
    _t(rf"\bi (?:am from|grew up in|was born in) {_ARTICLE}{_VALUE}", "origin",
       "where do i come from originally?", "where i grew up"),
    _t(rf"\bi have ({'|'.join(_NUMBERS)}) ([a-z]+)", "count {2}", "how many {2} are mine?",
       "my {2}", "{1} {2}"),
    _t(rf"\bmy ({_KIN.replace(' ', '|')}) is {_ARTICLE}{_VALUE}", "kin {1}",
       "what is my {1} like?", "my {1}"),
    _t(rf"\bi play {_ARTICLE}{_VALUE}", "play", "what is it that i play?", "what i play"),
    _t(rf"\bi drive {_ARTICLE}{_VALUE}", "vehicle", "what vehicle is mine?", "my car"),
    _t(r"\bi am ([a-z]+|\d+) years old", "age", "how old am i?", "my age", "{1} years old"),
    _t(rf"\bi (?:study|studied|teach|major in) {_VALUE}", "study", "what subject is mine?",
       "my studies"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Probe:
    question: str
    answer: str
    kind: str  # one of KINDS
    slot: str
    exchange: int  # where the fact was said (0-based, in its conversation)


@dataclass(frozen=True, slots=True)
class Conversation:
    name: str
    exchanges: tuple[tuple[str, str, datetime], ...]  # user, assistant, when
    probes: tuple[Probe, ...]
    asked_at: datetime
    bot_probes: tuple[Probe, ...] = ()  # about what the other speaker said of themselves


def load(split: str, data: Path = DATA) -> list[list[str]]:
    """The split's dialogues, each its utterances in order (the labels dropped)."""
    raw = json.loads((data / f"anno_{split}.json").read_text(encoding="utf-8"))
    return [[turn[0] for turn in raw[key]] for key in sorted(raw, key=_numeric)]


def _numeric(key: str) -> tuple[int, str]:
    return (int(key), key) if key.isdigit() else (1 << 30, key)


def conversations(
    split: str,
    per: int = PER,
    shuffles: int = 1,
    limit: int | None = None,
    data: Path = DATA,
    seed: int = 11,
) -> list[Conversation]:
    """The split's dialogues joined `per` at a time, each speaker once as the user, in
    `shuffles` orders (each a different haystack around the same dialogues)."""
    dialogues = load(split, data)
    out = []
    for shuffle in range(shuffles):
        for side in (0, 1):
            order = list(range(len(dialogues)))
            random.Random(seed + 2 * shuffle + side).shuffle(order)
            for start in range(0, len(order) - per + 1, per):
                chosen = [dialogues[i][side:] for i in order[start : start + per]]
                name = f"{split}-{shuffle}-{side}-{start // per}"
                out.append(build(name, chosen, seed + start))
    return out[:limit] if limit is not None else out


def build(name: str, dialogues: Sequence[Sequence[str]], seed: int) -> Conversation:
    """One conversation: the dialogues a day apart, their probes after the last one."""
    rng = random.Random(seed)
    exchanges: list[tuple[str, str, datetime]] = []
    for day, utterances in enumerate(dialogues):
        at = T0 + timedelta(days=day, hours=rng.randint(8, 20), minutes=rng.randint(0, 59))
        for i in range(0, len(utterances) - 1, 2):
            exchanges.append((utterances[i], utterances[i + 1], at))
            at += timedelta(minutes=rng.randint(1, 4))
    asked = exchanges[-1][2] + timedelta(days=1) if exchanges else T0
    return Conversation(name, tuple(exchanges), tuple(probes_of(exchanges)), asked,
                        tuple(probes_of(exchanges, side=1)))  # fmt: skip


def disclosures(user: str) -> Iterator[tuple[str, str, str, str]]:
    """(slot, answer, persona question, what it is about) for each template match."""
    for template in TEMPLATES:
        for match in template.pattern.finditer(user):
            groups = match.groups()
            value = _trim(groups[-1])
            if not value:
                continue
            fill = ("", *groups)  # "{1}" is the first group
            yield (template.slot.format(*fill), template.answer.format(*fill, v=value),
                   template.persona.format(*fill), template.about.format(*fill))  # fmt: skip


def _trim(value: str) -> str:
    words = []
    for word in value.split():
        if word in _STOP:
            break
        words.append(word)
    return " ".join(words)


def probes_of(exchanges: Sequence[tuple[str, str, datetime]], side: int = 0) -> list[Probe]:
    """Every checkable disclosure of the user (`side` 0), or of the other speaker (1,
    asked in the second person), three questions each (see the module)."""
    texts = [f"{u}\n{a}".lower() for u, a, _ in exchanges]
    found: dict[str, list[tuple[int, str, str, str]]] = {}
    for n, exchange in enumerate(exchanges):
        for slot, answer, persona, about in disclosures(exchange[side].lower()):
            if side:
                persona, about = _second_person(persona), _second_person(about)
            found.setdefault(slot, []).append((n, answer, persona, about))
    probes = []
    for slot, said in found.items():
        if len(said) != 1:
            continue  # told twice (or by two personas): no single right answer
        n, answer, persona, about = said[0]
        if n >= len(exchanges) - RECENT or sum(answer in t for t in texts) != 1:
            continue
        day = exchanges[n][2].strftime("%Y-%m-%d")
        told = "did you tell me" if side else "did i tell you"
        probes += [
            Probe(persona, answer, "persona", slot, n),
            Probe(f"what {told} about {about}?", answer, "about", slot, n),
            Probe(f"when {told} about {about}?", day, "when", slot, n),
        ]
    return probes


_SECOND = {"i": "you", "am": "are", "my": "your", "mine": "yours"}


def _second_person(text: str) -> str:
    """ "how old am i?" → "how old are you?", "where i live" → "where you live"."""
    return re.sub(r"[a-z]+", lambda m: _SECOND.get(m.group(0), m.group(0)), text)
