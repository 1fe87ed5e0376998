"""The resets that stand: a topic detector run as the product runs it, soft resets included.

`bench.topics.predict` scores a detector's every reset. The product's automatic reset is
soft (`memory.soft_reset`): one of the next `REVERT_WITHIN` messages that continues the
closed case, or a later one naming its identifiers, undoes it (`decide_revert`, over the
closed case as `previous_case` keeps it, `chained` when a young episode is closed), and
after that no automatic reset follows for `UNDO_MINUTES` (`respect_undo`); a reset whose
own message names the case it would close is not made (`decide_veto`). A
reset that is undone costs the user nothing that stays, so this replay reports the
resets that stand; a true reset undone by a later message counts as missed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bench.topics import DEFAULT_WINDOW, Detector, Session, Turn, turn_context
from memory.soft_reset.case import chained, previous_case
from memory.soft_reset.revert import Revert, RevertCheck, decide_revert, decide_veto
from memory.types import Exchange, PreviousCase

UNDO_MINUTES = 60.0  # VENTANA_UNDO_MINUTES' default
# An episode folds nothing before the window (6) and a fold batch (4) are full: until
# then a reset it opened is not borne out (`memory.episodes.young`).
YOUNG = DEFAULT_WINDOW + 4


def predict_standing(
    session: Session, detect: Detector, window: int = DEFAULT_WINDOW
) -> tuple[list[bool], int]:
    """Per turn, whether a reset there stands (False for the first), and how many resets
    the detector made that a later message reverted."""
    turns = session.turns

    def resets(start: int, i: int) -> bool:
        episode = _exchanges(turns, start, i)[-window:]
        return detect(turn_context(session, turns[i], episode, turns[i - 1].ts)).reset

    return _replay(turns, resets)


RevertRule = Callable[[RevertCheck], Revert | None]


def replay_standing(
    turns: Sequence[Turn],
    probability: Callable[[int, int], float],
    threshold: float,
    revert: RevertRule = decide_revert,
) -> list[bool]:
    """`predict_standing` for a model being fitted: `probability(start, i)` is its
    probability of a reset at turn i with the episode opened at turn `start`; `revert`
    stands in for the product's rule (`bench.topic_model.revert` compares others)."""
    return _replay(turns, lambda start, i: probability(start, i) >= threshold, revert)[0]


def _replay(
    turns: Sequence[Turn],
    resets: Callable[[int, int], bool],
    revert: RevertRule = decide_revert,
) -> tuple[list[bool], int]:
    """The product's soft resets over `turns`, `resets(start, i)` deciding at turn i with
    the episode opened at `start`: per turn whether a reset stands, and the reverts."""
    start, out, closed_at, reset_at, reverted = 0, [False], -1, -1, 0
    previous: PreviousCase | None = None
    reopened: datetime | None = None
    for i in range(1, len(turns)):
        turn = turns[i]
        if previous is not None:  # `decide_revert` knows how late it may be
            episode = _exchanges(turns, start, i)
            if revert(RevertCheck(turn.user, previous, "auto:bench", episode, i - start)):
                out[reset_at], start, previous, reopened = False, closed_at, None, turn.ts
                out.append(False)
                reverted += 1
                continue
        reset = resets(start, i) and not _after_undo(reopened, turn.ts)
        if reset:
            closed = _exchanges(turns, start, i)
            case = previous_case(1, closed, closed[-1].reply_text)
            if previous is not None and i - start < YOUNG:
                case = chained(case, previous)  # `Episodes.carried_over`'s chain
            reset = decide_veto(turn.user, case) is None  # the message names the case
        out.append(reset)
        if reset:
            previous = case
            closed_at, reset_at, start = start, i, i
    return out, reverted


def _exchanges(turns: Sequence[Turn], start: int, end: int) -> tuple[Exchange, ...]:
    return tuple(
        Exchange(n + 1, 1, t.user, t.assistant, signal=True)
        for n, t in enumerate(turns[start:end], start)
    )


def _after_undo(reopened: datetime | None, now: datetime) -> bool:
    """No automatic reset this soon after a revert (`respect_undo`)."""
    return reopened is not None and now - reopened <= timedelta(minutes=UNDO_MINUTES)
