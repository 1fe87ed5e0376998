"""Per-key recall statistics in memory, for the searches that still go to disk.

Pure. BM25 needs a key's own statistics: its count of indexed exchanges and each query
term's document frequency, over every episode. The keys held in memory
(`memory.recall.hot`) have them all; a search on disk (a key not held yet, or too large
to hold, or one that also searches the episode a recent reset closed) read them from
the index's vocabulary every time, and the vocabulary walks each term's whole doclist
(the key's document mark: every exchange of the key). Here they are kept per key, learnt
term by term from the searches' reads (so nothing is read at start, and a key's first
search after a restart reads what it needs), and kept exact by the store, the only
writer of its database:

- `writing` before a signal exchange is queued, `added` with its terms once committed
  (or `drop` when its caller cannot tell whether it was);
- `drop` a key whose indexed exchanges were erased, `clear` when another connection
  committed or a key was forgotten (its session id may go to a new key);
- a read is learnt from only when no write of its key is in flight as it lands and none
  was committed (or dropped) since its `lookup`: otherwise it may or may not hold that
  write, and counting it again would be wrong.

Bounded: at most `max_terms` terms in all (a key counts one more), least recently
searched keys out first.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MAX_TERMS = 200_000  # terms kept in all, every key (about 100 bytes each)


@dataclass(slots=True)
class _Key:
    docs: int | None = None  # indexed exchanges of the key, every episode (None: unknown)
    df: dict[str, int] = field(default_factory=dict)  # known terms only (0: not indexed)
    version: int = 0  # bumped by each committed write of the key


@dataclass(frozen=True, slots=True)
class Known:
    """What `lookup` found of a key's statistics, and what its search must read."""

    session_id: int
    docs: int | None  # None: to be read
    df: dict[str, int]  # the known terms of the query
    missing: tuple[str, ...]  # the query's terms to be read
    token: tuple[_Key, int]  # the key as it was: a read learnt from only if unchanged

    def merged(self, docs: int | None, df: dict[str, int]) -> tuple[int, dict[str, int]]:
        """The key's statistics for its search: the known, and the `missing` read now
        (`df` holds the terms found; one not found is not indexed)."""
        every = dict(self.df)
        every.update({term: df.get(term, 0) for term in self.missing})
        return (self.docs if self.docs is not None else docs or 0), every


class KeyStats:
    """The keys' statistics known so far (see the module)."""

    def __init__(self, max_terms: int = MAX_TERMS) -> None:
        self.max_terms = max_terms
        self._keys: OrderedDict[int, _Key] = OrderedDict()
        self._writing: Counter[int] = Counter()  # writes in flight, by key (no zeros)
        self._size = 0

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def size(self) -> int:
        """What the bound counts: the terms kept, and one for each key."""
        return self._size

    def lookup(self, session_id: int, terms: Iterable[str]) -> Known:
        """The statistics known for a search of `terms`, and what is left to read."""
        key = self._keys.get(session_id)
        wanted = tuple(dict.fromkeys(terms))
        if key is None:
            key = self._keys[session_id] = _Key()
            self._size += 1
            self._bound()
        self._keys.move_to_end(session_id)
        df = {t: key.df[t] for t in wanted if t in key.df}
        missing = tuple(t for t in wanted if t not in key.df)
        return Known(session_id, key.docs, df, missing, (key, key.version))

    def learn(self, known: Known, docs: int | None, df: dict[str, int]) -> None:
        """Keep what a search read for `known`, unless a write of its key may be missing
        from it or be counted in it twice."""
        if self._writing[known.session_id]:  # it may hold the write or not
            return
        key, version = known.token
        if self._keys.get(known.session_id) is not key or key.version != version:
            return
        before = len(key.df)
        if key.docs is None and docs is not None:
            key.docs = docs
        for term in known.missing:
            key.df[term] = df.get(term, 0)
        self._size += len(key.df) - before
        self._bound()

    def writing(self, session_id: int) -> None:
        """A signal exchange of the key is about to be written."""
        self._writing[session_id] += 1

    def added(self, session_id: int, terms: Sequence[str]) -> None:
        """The exchange `writing` announced was committed, with these terms."""
        self._written(session_id)
        key = self._keys.get(session_id)
        if key is None:
            return
        key.version += 1
        if key.docs is not None:
            key.docs += 1
        df = key.df
        for term in set(terms):
            if term in df:
                df[term] += 1

    def drop(self, session_id: int, *, writing: bool = False) -> None:
        """The key's indexed exchanges changed otherwise (or a write `writing` announced
        may or may not have committed): read them again."""
        if writing:
            self._written(session_id)
        key = self._keys.pop(session_id, None)
        if key is not None:
            self._size -= len(key.df) + 1

    def clear(self) -> None:
        """Another connection wrote, or a key was forgotten: nothing kept is trusted."""
        self._keys.clear()
        self._size = 0

    def _written(self, session_id: int) -> None:
        self._writing[session_id] -= 1
        if self._writing[session_id] <= 0:
            del self._writing[session_id]

    def _bound(self) -> None:
        while self._size > self.max_terms and self._keys:
            _, key = self._keys.popitem(last=False)
            self._size -= len(key.df) + 1
