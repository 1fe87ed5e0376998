"""Recently searched keys' recall index, in memory: a search with no database round trip.

Pure. A store that is the only writer of its database (SQLite: one process owns the
file) keeps here, for the keys searched lately, what its full-text index holds for them:
each signal exchange of the key's current episode with its terms, and the key's own
statistics (its count of indexed exchanges, each term's document frequency, over every
episode, as the on-disk index counts them). A search is then a walk over the query
terms' postings and the same ranking as the on-disk search (`memory.recall.rank`).

Why: the on-disk search is fast (about 0.2 ms), but it is a round trip to the reader's
thread, and inside a busy turn it cost 0.5 to 0.7 ms more than that. A chat's turns come
in bursts, so the keys searched lately are the ones searched next. A key not held is
searched on disk while the store reads it in the background, in batches (`Load`).

It stays exact only if the store tells it every change of what is indexed:
- `add` after each signal exchange is committed (a key not held is skipped; one being
  read gets it when the read ends, and an exchange read twice counts once);
- `drop` of a key whose exchanges changed episode (an undone reset) or were erased: a
  read under way is discarded;
- `clear` when another connection committed (the store checks SQLite's
  `data_version` in every write batch), or after a `/forget`.

Bounded: at most `max_terms` terms in all, indexed and distinct (40 to 50 bytes each,
texts included), least recently searched keys out first; a key larger than half of that
is never held (the on-disk search serves it). An exchange's two vectors and its content
tokens' ids (`dense`: 512 bytes, and 4 bytes a token, about 100 more; up to twice that
while their arrays grow) are not counted: on support exchanges of about 15 terms, some
40 MB of them sit beside the terms at the bound.
"""

from __future__ import annotations

import heapq
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from memory.recall import rerank
from memory.recall.dense import SHOWN, Vectors, fuse
from memory.recall.port import RecallQuery
from memory.recall.rank import (
    CANDIDATES,
    COUNT_CAP,
    K1,
    B,
    Candidate,
    Hit,
    rank,
    searchable,
    weights,
)
from memory.types import Exchange

MAX_TERMS = 1_000_000  # terms held in all (`KeyIndex.size`): 40 to 50 MB


@dataclass(frozen=True, slots=True)
class Indexed:
    """One indexed exchange as the store read or wrote it: the exchange, its terms."""

    exchange: Exchange
    terms: tuple[str, ...]


@dataclass(slots=True)
class KeyIndex:
    """One key: its statistics over every episode, its current episode's postings."""

    session_id: int
    episode_id: int
    docs: int = 0  # indexed exchanges of the key, every episode
    df: Counter[str] = field(default_factory=Counter)
    # term: the ids of the episode's exchanges holding it, in order, and how many times
    # each holds it (one byte each: a count past `COUNT_CAP`, 255, is kept as 255)
    postings: dict[str, tuple[list[int], bytearray]] = field(default_factory=dict)
    entries: dict[int, Candidate] = field(default_factory=dict)
    lengths: dict[int, int] = field(default_factory=dict)  # id: its number of terms
    terms: int = 0  # the episode's indexed terms: its size, and its average length
    vectors: Vectors = field(default_factory=Vectors)  # the episode's two sides (`dense`)

    def add(self, item: Indexed) -> None:
        """Count one exchange in the statistics; index it if it is of the episode."""
        ex = item.exchange
        if ex.id in self.entries:
            return
        counts = Counter(item.terms)
        self.docs += 1
        self.df.update(counts.keys())
        if ex.episode_id != self.episode_id:
            return
        self.entries[ex.id] = Candidate(ex, item.terms)
        self.lengths[ex.id] = len(item.terms)
        self.vectors.add(ex.id, ex.user_text, ex.reply_text)
        postings = self.postings
        for term, tf in counts.items():
            found = postings.get(term)
            if found is None:
                postings[term] = ([ex.id], bytearray((min(tf, COUNT_CAP),)))
            else:
                found[0].append(ex.id)
                found[1].append(min(tf, COUNT_CAP))
        self.terms += len(item.terms)

    @property
    def size(self) -> int:
        """What the bound counts: the episode's indexed terms, and the statistics' distinct
        terms (a key with long past episodes holds those too)."""
        return self.terms + len(self.df)

    def search(self, query: RecallQuery) -> list[Hit]:
        """What the on-disk search returns for `query`: the best `CANDIDATES` matches
        older than `query.before` by BM25 over the key's statistics, re-ranked; with
        `query.vector`, chosen among those and the exchanges nearest it
        (`memory.recall.rerank`)."""
        if not query.terms or query.limit <= 0 or not self.entries:
            return []
        wanted = searchable(query.terms, self.df, self.docs)
        if not wanted:
            return []
        bound = query.before if query.before is not None else 2**62
        avg = max(self.terms / len(self.entries), 1.0)
        fixed, per_term = K1 * (1 - B), K1 * B / avg  # BM25's length norm: fixed + per × len
        scores: dict[int, float] = {}
        # what the ranking needs of each match, so it does not count its terms again
        counts: dict[int, list[tuple[int, int]]] = {}
        lengths, counted = self.lengths, counts.get
        for at, (term, weight) in enumerate(weights(wanted, self.df, self.docs)):
            found = self.postings.get(term)
            if found is None:
                continue
            top = weight * (K1 + 1)
            for exchange_id, tf in zip(*found, strict=True):
                if exchange_id >= bound:
                    break  # postings are in id order
                norm = fixed + per_term * lengths[exchange_id]
                known = counted(exchange_id)
                if known is None:  # its first term: the score is this term's (0.0 + x is x)
                    scores[exchange_id] = top * tf / (tf + norm)
                    counts[exchange_id] = [(at, tf)]
                else:
                    scores[exchange_id] += top * tf / (tf + norm)
                    known.append((at, tf))
        if not scores:
            return []
        # The ranking orders its hits itself: only which ones are the best matters, by
        # score then id (pairs compared as they are, no key function called per match).
        if len(scores) <= CANDIDATES:
            best: list[int] = list(scores)
        else:
            pairs = zip(scores.values(), scores, strict=True)
            best = [i for _, i in heapq.nlargest(CANDIDATES, pairs)]
        entries = self.entries
        chosen = [entries[i] for i in best]
        hits = rank(wanted, chosen, self.df, self.docs, query.limit, counts)
        if query.vector is None or not len(self.vectors):
            return hits
        # the exchanges nearest the message in the embedding, and BM25's hits: the learned
        # model chooses among them (`rerank.RERANK` off: fused by reciprocal rank)
        nearest = self.vectors.nearest_sides(query.vector, query.before)
        limit = min(query.limit, SHOWN)
        if rerank.RERANK:
            return rerank.choose(hits, nearest, entries, self.vectors, query, limit)
        by_reply = frozenset(i for i, reply in nearest if reply)
        return fuse(hits, [i for i, _ in nearest], entries, limit, by_reply)


class Load:
    """One read of a key from the database under way: the exchanges committed meanwhile
    (added when it ends), and whether the key changed otherwise (it is then discarded)."""

    __slots__ = ("added", "session_id", "stale")

    def __init__(self, session_id: int) -> None:
        self.session_id = session_id
        self.stale = False
        self.added: list[Indexed] = []


class HotKeys:
    """The keys searched lately, least recently searched first out (see the module)."""

    def __init__(self, max_terms: int = MAX_TERMS) -> None:
        self.max_terms = max_terms
        self._keys: OrderedDict[int, KeyIndex] = OrderedDict()
        self._size = 0
        self._loads: dict[int, list[Load]] = {}  # reads under way, by key
        self._too_big: set[int] = set()
        self.loads = 0  # keys read from the database (for benches and tests)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def size(self) -> int:
        """What is held, in all, as the bound counts it (`KeyIndex.size`)."""
        return self._size

    def search(self, query: RecallQuery) -> list[Hit] | None:
        """The hits, or None when the key (with this episode) is not held."""
        index = self._keys.get(query.session_id)
        if index is None or index.episode_id != query.episode_id:
            return None
        self._keys.move_to_end(query.session_id)
        return index.search(query)

    def too_big(self, session_id: int) -> bool:
        """A key never held (or nothing is, `max_terms` 0): the on-disk search serves it."""
        return self.max_terms <= 0 or session_id in self._too_big

    def begin_load(self, session_id: int) -> Load:
        """Before reading a key: what changes of it meanwhile is kept track of."""
        load = Load(session_id)
        self._loads.setdefault(session_id, []).append(load)
        self.loads += 1
        return load

    def keep(self, load: Load, index: KeyIndex) -> bool:
        """Hold a key just read, with what was committed meanwhile, unless it changed
        otherwise or is too large; the least recently searched keys go to make room.
        Whether it is held now."""
        self.abandon(load)
        sid = index.session_id
        if load.stale:
            return False
        for item in load.added:
            if item.exchange.episode_id != index.episode_id:  # a new episode began
                return False
            index.add(item)  # once, if the read already had it
        if self.too_large(index):
            return False
        self._forget(sid)
        self._keys[sid] = index
        self._size += index.size
        while self._size > self.max_terms and len(self._keys) > 1:
            self._forget(next(iter(self._keys)))
        return True

    def abandon(self, load: Load) -> None:
        """A read that ended (kept or failed)."""
        loads = self._loads.get(load.session_id)
        if loads is not None and load in loads:
            loads.remove(load)
            if not loads:
                del self._loads[load.session_id]

    def too_large(self, index: KeyIndex) -> bool:
        """Never held: more than half of `max_terms` (a read can stop there)."""
        if index.size > self.max_terms // 2:
            self._too_big.add(index.session_id)
            return True
        return False

    def add(self, session_id: int, item: Indexed) -> None:
        """A signal exchange of the key, just committed."""
        for load in self._loads.get(session_id, ()):
            load.added.append(item)
        index = self._keys.get(session_id)
        if index is None:
            return
        if item.exchange.episode_id != index.episode_id:  # a new episode: read it afresh
            self._forget(session_id)
            return
        before = index.size
        index.add(item)
        self._size += index.size - before
        if self.too_large(index):
            self._forget(session_id)

    def drop(self, session_id: int) -> None:
        """The key's exchanges changed (an undone reset, an erasure): read it again."""
        self._stale(session_id)
        self._too_big.discard(session_id)
        self._forget(session_id)

    def clear(self) -> None:
        """Another connection wrote, or a key was forgotten: nothing held is trusted."""
        for loads in self._loads.values():
            for load in loads:
                load.stale = True
        self._keys.clear()
        self._too_big.clear()
        self._size = 0

    def _forget(self, session_id: int) -> None:
        index = self._keys.pop(session_id, None)
        if index is not None:
            self._size -= index.size

    def _stale(self, session_id: int) -> None:
        for load in self._loads.get(session_id, ()):
            load.stale = True
