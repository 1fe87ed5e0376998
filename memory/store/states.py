"""The turn state a backend read with an intake, kept for the key's next `turn_state`:
a turn whose chat wrote nothing since its intake reads no state of its own (one round
trip saved), and nobody above the store carries the state from intake to turn.

Shared by the backends, as `DoneMarks` is. Each write that changes a key's state voids
what is kept of it (by key, session or episode, whichever the write knows); a write that
lands while an intake is still in flight voids that intake's state too, so a state that
may miss a write is never kept. Bounded: at most `KEPT` keys (the oldest go first) and
`RECENT` voids remembered for the intakes in flight.

A state handed out by `turn_state` is the base the key's next exchange advances: when
nothing of the chat was voided between the hand-out and that exchange's commit, the state
after it (`advanced`) is kept for the next intake, which then reads no state of its own.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from memory.types import Exchange, TurnState

KEPT = 10_000  # keys with a kept state; past it the oldest go
# States carried from an exchange stay kept while the chat is idle, so they get a bound
# of their own: carrying one past it first lets the oldest kept states go (7–9 kB each
# in `bench.overhead`'s turns, a window of six: under 20 MB); a chat whose state went
# reads it at its next intake, as every chat did before.
CARRIED = 2_048
RECENT = 4_096  # voids remembered for intakes in flight; past it they keep nothing


@dataclass(frozen=True, slots=True)
class _Kept:
    window: int
    state: TurnState


@dataclass(frozen=True, slots=True)
class Handed:
    """A state `turn_state` handed out, valid when the void count was `since`."""

    since: int
    window: int
    state: TurnState


def advanced(state: TurnState, stored: Exchange, window: int) -> TurnState | None:
    """`state` (read with `window` exchanges) after `stored` was committed as the newest
    exchange of its episode, as a fresh read would give it: its reply is the last, it is
    the last activity and, when signal, it joins the window; what leaves the window stays
    pending when it is past the summary's checkpoint. None for another episode."""
    if stored.episode_id != state.episode.id:
        return None
    if not stored.signal:
        return replace(state, last_activity=stored.created_at, last_reply=stored.reply_text)
    if window <= 0:
        recent, pending = state.window, (*state.pending, stored)
    else:
        checkpoint = state.summary.checkpoint if state.summary else 0
        rows = (*state.pending, *state.window, stored)
        recent = rows[-window:]
        pending = tuple(x for x in rows[:-window] if x.id > checkpoint)
    return replace(
        state,
        window=recent,
        pending=pending,
        last_activity=stored.created_at,
        last_reply=stored.reply_text,
    )


class IntakeStates:
    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self._handed: dict[int, Handed] = {}  # by session: each chat's last hand-out
        self._by_session: dict[int, str] = {}
        self._by_episode: dict[int, str] = {}
        self._seq = 0  # voids so far
        self._cleared = 0  # `_seq` at the last `clear`
        self._recent: deque[tuple[int, object]] = deque()  # (seq, what), at most RECENT
        # each remembered mark's newest void: a check reads three marks, not every void
        # since its intake (a thousand chats in flight made that a scan of a thousand)
        self._last: dict[object, int] = {}

    def begin(self) -> int:
        """Before an intake's write is queued: the mark its `keep` is checked against."""
        return self._seq

    def keep(self, since: int, window: int, state: TurnState | None) -> None:
        """The state read with an intake begun at `since`, unless a write that may be
        missing from it was voided meanwhile."""
        if state is None or self._voided_since(since, state):
            return
        self._put(window, state)

    def _put(self, window: int, state: TurnState) -> None:
        self._drop(state.key)
        if len(self._kept) >= KEPT:
            self._drop(next(iter(self._kept)))
        self._kept[state.key] = _Kept(window, state)
        self._by_session[state.session_id] = state.key
        self._by_episode[state.episode.id] = state.key

    def kept(self, key: str, window: int) -> TurnState | None:
        """The state kept for `key` with `window` exchanges, left kept; else None."""
        kept = self._kept.get(key)
        return kept.state if kept is not None and kept.window == window else None

    def hand_out(self, since: int, window: int, state: TurnState) -> None:
        """`turn_state` handed out `state`, kept or read after the void count was `since`."""
        self._handed.pop(state.session_id, None)
        if len(self._handed) >= KEPT:
            self._handed.pop(next(iter(self._handed)))
        self._handed[state.session_id] = Handed(since, window, state)

    def handed(self, session_id: int) -> Handed | None:
        """The session's last hand-out, once, if nothing of its chat was voided since."""
        handed = self._handed.pop(session_id, None)
        if handed is None or self._voided_since(handed.since, handed.state):
            return None
        return handed

    def carry(self, handed: Handed, stored: Exchange) -> None:
        """Keep the hand-out advanced by `stored`: call it with no await between the
        exchange's commit and `handed` (which checks the voids up to then), after the
        exchange's own void."""
        state = advanced(handed.state, stored, handed.window)
        if state is None:
            return
        self._drop(state.key)
        while len(self._kept) >= CARRIED:
            self._drop(next(iter(self._kept)))
        self._put(handed.window, state)

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
        self._handed.clear()
        self._by_session.clear()
        self._by_episode.clear()

    def _void(self, what: object) -> None:
        self._seq += 1
        if len(self._recent) >= RECENT:  # forget the oldest void, and its mark with it
            seq, old = self._recent.popleft()
            if self._last.get(old) == seq:  # no newer void of the same mark
                del self._last[old]
        self._recent.append((self._seq, what))
        self._last[what] = self._seq

    def _voided_since(self, since: int, state: TurnState) -> bool:
        if self._seq == since:
            return False
        if self._cleared > since or len(self._recent) < self._seq - since:
            return True  # cleared, or more voids than remembered: keep nothing
        last = self._last.get
        return (
            last(state.key, 0) > since
            or last(("s", state.session_id), 0) > since
            or last(("e", state.episode.id), 0) > since
        )

    def _drop(self, key: str) -> _Kept | None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._by_session.pop(kept.state.session_id, None)
            self._by_episode.pop(kept.state.episode.id, None)
        return kept
