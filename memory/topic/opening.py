"""How much a message reads like the first message of a support case, learned from text.

A new case often opens with no cue word at all ("Hola, quería saber por qué me han
cobrado dos veces la cuota", "hi, I ordered a desk last week and it arrived broken"):
the overlap and cue features see nothing, but the message's own shape (a greeting, a
problem told from its start, "quería", "I ordered", a number the user gives for the
first time) is the shape of an opening. `opening_logit` is a bag-of-words logistic
regression over a message's folded words, their bigrams and its first three words,
trained by `bench.topic_model.opening` on the first message of every case of the
training sessions against their other messages; its weights ship in
`models/opening-v2.json` (only the words that carry weight). The topic model reads it
as one feature (`opening`).

Pure and cached per text: a turn costs one lookup per word of the new message.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from itertools import pairwise

from memory.text.fold import fold

OPENING_FILE = "opening-v2.json"
MAX_WORDS = 40  # an opening says what it is about early; a pasted log adds nothing
FIRST_WORDS = 3
_WORD = re.compile(r"[^\W\d_]+|\d+")


def opening_terms(text: str) -> frozenset[str]:
    """The message's words (folded; every number as `#`), adjacent pairs and first words."""
    said = ["#" if w.isdigit() else w for w in _WORD.findall(fold(text))][:MAX_WORDS]
    pairs = {f"{a}_{b}" for a, b in pairwise(said)}
    return frozenset({*said, *pairs, *(f"^{w}" for w in said[:FIRST_WORDS])})


@dataclass(frozen=True, slots=True)
class OpeningModel:
    version: str
    weights: dict[str, float]
    bias: float

    def logit(self, text: str) -> float:
        """The bias and each term's weight, summed exactly (`math.fsum`): the terms are a
        set, and a plain sum's last bits followed its order, which the hash seed changes
        from process to process; a boosted head's splits must see the same value."""
        return self.bias + math.fsum(self.weights.get(t, 0.0) for t in opening_terms(text))


def parse_opening(raw: dict[str, object]) -> OpeningModel:
    weights = raw["weights"]
    if not isinstance(weights, dict):
        raise ValueError("opening model: `weights` must be an object of term: weight")
    terms = {str(k): float(v) for k, v in weights.items()}
    return OpeningModel(str(raw["version"]), terms, float(str(raw["bias"])))


@cache
def load_opening(name: str = OPENING_FILE) -> OpeningModel:
    folder = resources.files("memory.topic").joinpath("models")
    return parse_opening(json.loads(folder.joinpath(name).read_text(encoding="utf-8")))


@lru_cache(maxsize=4096)
def opening_logit(text: str) -> float:
    """The shipped model's log-odds that `text` opens a case."""
    return load_opening().logit(text)
