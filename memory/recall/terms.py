"""Terms of a text for recall: folded, stemmed, function words out, hard facts whole.

Pure functions. The same `terms` feed the index (each exchange) and the query (the new
message), so both sides always agree on what a word becomes:

- case and accents are folded (`Migré` → `migre`);
- function words of Spanish and English are dropped (`memory.text.stopwords`,
  `RECALL_STOP_WORDS`);
- a light suffix stemmer makes inflections meet (`migré`, `migración`, `migrar` → `migr`;
  `charged`, `charges`, `charging` → `charg`), capped at 7 characters
  (`memory.text.stem`, `RECALL_STEMMER`);
- a hard token (anything with a digit or an `@`: an order id, an IP, a date, an amount,
  an email) is kept whole, separators as `_` (`10.0.0.5` → `10_0_0_5`), and its long
  digit runs are kept too, so `order-731` is found by "el pedido 731".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory.caches import WINDOW_TEXTS
from memory.facts import extract_facts
from memory.text.fold import fold
from memory.text.stem import RECALL_STEMMER
from memory.text.stopwords import RECALL_STOP_WORDS

MIN_WORD = 3  # shorter words carry no topic ("ip" and "ns" are kept: see _SHORT)
HARD_WEIGHT = 4.0  # a hard fact in the message counts this many ordinary words
FACT_WORD_WEIGHT = 2.0  # a word inside a fact the extractor found ("3 de marzo")
_SHORT = frozenset({"ip", "ns", "dns", "vpn", "ssl", "api", "iva", "pin", "sms", "url", "ssh"})
_TOKEN = re.compile(r"[\w@]+(?:[.\-/:,@'][\w@]+)*")
_WORD = re.compile(r"[^\W_]+")
_SEPARATORS = re.compile(r"[^0-9a-z]+")
_DIGITS = re.compile(r"\d{3,}")
_EMAIL = re.compile(r"[^\W_]@[^\W_]")


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One term of a query: what it is in the index, how much it weighs, and whether it
    is a hard fact (matched exactly, never dropped as too common)."""

    term: str
    weight: float
    hard: bool = False


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light Spanish/English stem of a folded word (see the module docstring)."""
    return RECALL_STEMMER(word)


def _is_hard(token: str) -> bool:
    """A token with a digit, or an email-like `x@y`."""
    return any(c.isdigit() for c in token) or _EMAIL.search(token) is not None


def _hard(token: str) -> list[str]:
    """The token whole and its long digit runs. An email-like token whose other letters
    are not ASCII ("a@þ") can fold to a bare function word: that is no term."""
    whole = _SEPARATORS.sub("_", token).strip("_")
    runs = [run for run in _DIGITS.findall(token) if run != whole]
    return [whole, *runs] if whole and whole not in RECALL_STOP_WORDS else runs


def _words(token: str) -> list[str]:
    out = []
    for word in _WORD.findall(token):
        if word in RECALL_STOP_WORDS or (len(word) < MIN_WORD and word not in _SHORT):
            continue
        stemmed = stem(word)
        if stemmed not in RECALL_STOP_WORDS:  # "thata" stems to "that": still nothing to search
            out.append(stemmed)
    return out


@lru_cache(maxsize=65536)
def _token(token: str) -> tuple[tuple[str, ...], bool]:
    """The terms of one folded token and whether they are hard facts. Cached: a
    language's words come back in every message, so most tokens cost a lookup."""
    if _is_hard(token):
        return tuple(_hard(token)), True
    return tuple(_words(token)), False


@lru_cache(maxsize=WINDOW_TEXTS)
def _analysed(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """Every term of `text` and its hard ones. Cached per text: a turn's message is
    analysed for its query and again when its exchange is indexed."""
    out: list[str] = []
    hard: set[str] = set()
    for token in _TOKEN.findall(fold(text)):
        found, is_hard = _token(token)
        out.extend(found)
        if is_hard:
            hard.update(found)
    return tuple(out), frozenset(hard)


def terms(text: str) -> list[str]:
    """Every term of `text` in order, repeats kept (term frequency counts)."""
    return list(_analysed(text)[0])


def hard_terms(text: str) -> frozenset[str]:
    """The hard-fact terms of `text` (digits or `@`), as `terms` writes them."""
    return _analysed(text)[1]


def query_terms(message: str, limit: int = 12) -> tuple[QueryTerm, ...]:
    """The terms to search for `message`: distinct, hard facts first and heaviest, then
    words inside extracted facts, then the other words in order; at most `limit`."""
    every, hard = _analysed(message)
    fact_words = {t for f in extract_facts(message) for t in terms(f.value)} - hard
    seen: dict[str, QueryTerm] = {}
    for term in every:
        if term in seen:
            continue
        if term in hard:
            seen[term] = QueryTerm(term, HARD_WEIGHT, hard=True)
        else:
            seen[term] = QueryTerm(term, FACT_WORD_WEIGHT if term in fact_words else 1.0)
    ordered = sorted(seen.values(), key=lambda q: -q.weight)  # stable: message order kept
    return tuple(ordered[:limit])
