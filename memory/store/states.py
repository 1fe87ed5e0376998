"""The turn state a backend read with an intake, kept for the key's next `turn_state`:
a turn whose chat wrote nothing since its intake reads no state of its own (one round
trip saved), and nobody above the store carries the state from intake to turn.

Shared by the backends, as `DoneMarks` is. Each write that changes a key's state voids
what is kept of it (by key, session or episode, whichever the write knows); a write that
lands while an intake is still in flight voids that intake's state too, so a state that
may miss a write is never kept. Bounded: at most `KEPT` keys (the oldest go first) and
`RECENT` voids remembered for the intakes in flight.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from memory.types import TurnState

KEPT = 10_000  # keys with a kept state; past it the oldest go
RECENT = 4_096  # voids remembered for intakes in flight; past it they keep nothing


@dataclass(frozen=True, slots=True)
class _Kept:
    window: int
    state: TurnState


class IntakeStates:
    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self._by_session: dict[int, str] = {}
        self._by_episode: dict[int, str] = {}
        self._seq = 0  # voids so far
        self._cleared = 0  # `_seq` at the last `clear`
        self._recent: deque[tuple[int, object]] = deque(maxlen=RECENT)  # (seq, what)

    def begin(self) -> int:
        """Before an intake's write is queued: the mark its `keep` is checked against."""
        return self._seq

    def keep(self, since: int, window: int, state: TurnState | None) -> None:
        """The state read with an intake begun at `since`, unless a write that may be
        missing from it was voided meanwhile."""
        if state is None or self._voided_since(since, state):
            return
        self._drop(state.key)
        if len(self._kept) >= KEPT:
            self._drop(next(iter(self._kept)))
        self._kept[state.key] = _Kept(window, state)
        self._by_session[state.session_id] = state.key
        self._by_episode[state.episode.id] = state.key

    def take(self, key: str, window: int) -> TurnState | None:
        """The state kept for `key` read with `window` exchanges, once; else None."""
        kept = self._drop(key)
        return kept.state if kept is not None and kept.window == window else None

    def void_key(self, key: str) -> None:
        self._void(key)
        self._drop(key)

    def void_session(self, session_id: int) -> None:
        self._void(("s", session_id))
        if (key := self._by_session.get(session_id)) is not None:
            self._drop(key)

    def void_episode(self, episode_id: int) -> None:
        self._void(("e", episode_id))
        if (key := self._by_episode.get(episode_id)) is not None:
            self._drop(key)

    def clear(self) -> None:
        """Another process wrote (or a forget may give a session id to a new key)."""
        self._seq += 1
        self._cleared = self._seq
        self._kept.clear()
        self._by_session.clear()
        self._by_episode.clear()

    def _void(self, what: object) -> None:
        self._seq += 1
        self._recent.append((self._seq, what))

    def _voided_since(self, since: int, state: TurnState) -> bool:
        if self._seq == since:
            return False
        if self._cleared > since or len(self._recent) < self._seq - since:
            return True  # cleared, or more voids than remembered: keep nothing
        marks = {state.key, ("s", state.session_id), ("e", state.episode.id)}
        for seq, what in reversed(self._recent):
            if seq <= since:
                return False
            if what in marks:
                return True
        return False

    def _drop(self, key: str) -> _Kept | None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._by_session.pop(kept.state.session_id, None)
            self._by_episode.pop(kept.state.episode.id, None)
        return kept
