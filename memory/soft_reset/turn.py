"""The soft reset in a turn: the revert before the topic check, and what rides along.

The turn engine (`memory.engine`) calls these: `revert` before the topic check (a
message that continues the case a recent automatic reset closed undoes that reset, or in
a dry run reads what undoing it would give), `in_play_for` after it (whether the closed
case's block rides and recall searches the closed episode) and `case_carry` to render
that block within its share of the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.episodes import Episodes
from memory.soft_reset.block import CASE_TOKENS, InPlay, case_block, in_play
from memory.soft_reset.revert import REVERT_WITHIN, RevertCheck, decide_revert
from memory.types import Exchange, TopicDecision, TurnState

REVERTED = "reset_reverted"  # the topic decision's reason on the turn that reverted


def since_reset(state: TurnState) -> int:
    """The messages of the state's episode so far, as far as a soft reset cares: its
    signal exchanges, or more than any revert window once it has folded some."""
    held = len(state.pending) + len(state.window)
    return held if state.summary is None else held + REVERT_WITHIN + 1


def exchanges_of(state: TurnState) -> tuple[Exchange, ...]:
    """The episode's exchanges at hand: pending, then the window."""
    return (*state.pending, *state.window)


async def revert(
    episodes: Episodes,
    state: TurnState,
    message: str,
    *,
    dry_run: bool,
    window: int,
    at: datetime,
) -> tuple[TurnState, TopicDecision] | None:
    """When `message` continues the case a recent automatic reset closed: that reset
    undone (in a dry run, only read as it would be), the state then and the turn's
    decision (`reset_reverted`, with why); None when the reset stands."""
    episode = state.episode
    check = RevertCheck(
        message, episode.previous, episode.opened_by, exchanges_of(state), since_reset(state)
    )
    found = decide_revert(check)
    if found is None:
        return None
    if dry_run:
        after = await episodes.peek_reverted(state, window=window, at=at)
    else:
        after = await episodes.revert(state, window=window, at=at)
    if after is None:
        return None
    signals = found.signals() | {"reverted_episode": episode.id}
    return after, TopicDecision("continue", REVERTED, signals)


def in_play_for(state: TurnState, message: str, carry: str) -> InPlay | None:
    """Why the closed case rides with this message (`memory.soft_reset.block`); never
    with `carry="none"`."""
    if carry != "identity":
        return None
    return in_play(state.episode.previous, message, exchanges_of(state), since_reset(state))


def case_carry(
    state: TurnState,
    soft: InPlay | None,
    language: str,
    count: Callable[[str], int],
    budget: int,
) -> str:
    """The closed case's block when it rides (within `CASE_TOKENS`, a tenth of a small
    budget), else ""."""
    previous = state.episode.previous
    if soft is None or previous is None:
        return ""
    return case_block(previous, language, count, min(CASE_TOKENS, budget // 10))
