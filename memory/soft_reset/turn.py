"""The soft reset in a turn: the revert before the topic check, and what rides along.

The turn engine (`memory.engine`) calls these: `revert` before the topic check (a
message that continues the case a recent automatic reset closed undoes that reset, or in
a dry run reads what undoing it would give), `veto` on a reset the check decides (the
message names the case it would close), `in_play_for` after it (whether the closed
case's block rides and recall searches the closed episode) and `case_carry` to render
that block within its share of the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.carry_over import Pairs
from memory.episodes import Episodes
from memory.soft_reset.block import CASE_TOKENS, InPlay, case_block, in_play
from memory.soft_reset.revert import REVERT_WITHIN, RevertCheck, decide_revert, decide_veto
from memory.types import Exchange, PreviousCase, TopicDecision, TurnState

REVERTED = "reset_reverted"  # the topic decision's reason on the turn that reverted
VETOED = "reset_vetoed"  # its reason when the message itself names the open case


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


def _vetoable(decision: TopicDecision) -> bool:
    """A reset the topic check read from the message; an idle reset is the operator's
    rule, not a reading of the message: it stands."""
    return decision.reset and decision.reason != "idle"


def veto(decision: TopicDecision, message: str, closing: PreviousCase) -> TopicDecision:
    """`decision`, or a continue when it is a reset `message` itself takes back: it names
    the case the reset would close (`closing`), or says that case goes on (`decide_veto`)."""
    if not _vetoable(decision):
        return decision
    found = decide_veto(message, closing)
    if found is None:
        return decision
    signals = decision.signals | {
        "suppressed_reset": decision.reason,
        "reset_veto_shared": list(found.shared),
    }
    return TopicDecision("continue", VETOED, signals)


async def vetoed(
    episodes: Episodes, state: TurnState, decision: TopicDecision, message: str
) -> tuple[TopicDecision, tuple[Pairs, PreviousCase] | None]:
    """`veto` over the case `state`'s episode would close, read from the store only for a
    reset it may veto; that reading too, for the reset to carry (None when not read)."""
    if not _vetoable(decision):
        return decision, None
    carried = await episodes.carried_over(state)
    return veto(decision, message, carried[1]), carried


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
