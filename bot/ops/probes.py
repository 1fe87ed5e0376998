"""Replay probes: a transcript line with `"probe": true` is a dry run at its point.

The engine previews it exactly as a real turn would be built (topic check, recall,
budget): no model is called, nothing is stored, so no later line can tell it ran. What
a real turn answers without a request (a command, a blank line, an oversized message)
builds none here either.
`ventana replay` reports it with `"probe": true` and leaves it out of the totals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.app import App
from bot.conversation.commands import is_command
from bot.ops.report import TurnReport
from memory.policy import Assembly
from memory.tokens import count_messages
from memory.types import TopicDecision
from providers.base import Message


@dataclass(frozen=True, slots=True)
class Probed:
    """What a probe's report line and context line need."""

    episodes: int
    prompt_tokens: int
    full_history_tokens: int
    window: int
    pending: int
    summary_tokens: int
    reset: bool
    reset_reason: str | None
    recall_exchanges: int
    recall_tokens: int
    system: str
    messages: list[dict[str, Any]]
    revert_reason: str | None = None  # the probe would revert the latest automatic reset

    def turn_report(self, session: str, turn: int) -> TurnReport:
        """The probe's report line: no fold, no model call, flagged as a probe."""
        return TurnReport(
            session=session,
            turn=turn,
            episode=self.episodes,
            prompt_tokens=self.prompt_tokens,
            full_history_tokens=self.full_history_tokens,
            window_exchanges=self.window,
            pending_exchanges=self.pending,
            summary_tokens=self.summary_tokens,
            fold_calls=0,
            reset=self.reset,
            reset_reason=self.reset_reason,
            model_called=False,
            recall_exchanges=self.recall_exchanges,
            recall_tokens=self.recall_tokens,
            probe=True,
            reset_reverted=self.revert_reason is not None,
            reset_revert_reason=self.revert_reason,
        )

    def context(self, session: str, turn: int) -> dict[str, Any]:
        """The probe's contexts line: the request a real turn would send."""
        return {"session": session, "turn": turn, "probe": True, "system": self.system,
                "messages": self.messages, "model_called": False}  # fmt: skip


async def dry_run(
    app: App, key: str, text: str, history: Sequence[Message], system_prompt: str
) -> Probed:
    """Preview `text` for `key` as a real turn would be built, writing nothing."""
    full = count_messages(app.tokenizer, system_prompt, [*history, Message("user", text)])
    episodes = len(await app.store.episodes(key))
    said = text.strip()  # as the handler reads a message
    if not said or is_command(said) or len(said) > app.settings.max_message_chars:
        # a real turn answers these itself (a command, "empty", "too long"): no request
        messages = [{"role": "user", "content": text}]
        return Probed(episodes, 0, full, 0, 0, 0, False, None, 0, 0, "", messages)
    seen = await app.engine.preview(key, said)
    plan, decision = seen.plan, seen.decision
    reason = decision.reason if decision.reset else None
    reverted = revert_reason(decision)
    if not isinstance(plan, Assembly):  # too large: no request would be sent
        messages = [{"role": "user", "content": text}]
        return Probed(
            episodes, 0, full, 0, 0, 0, decision.reset, reason, 0, 0, "", messages, reverted
        )
    return Probed(
        episodes,
        count_messages(app.tokenizer, plan.system, plan.messages),
        full,
        len(plan.window),
        len(plan.pending),
        plan.tokens.get("summary", 0),
        decision.reset,
        reason,
        len(plan.recall.hits),
        plan.tokens.get("recall", 0),
        plan.system,
        [{"role": m.role, "content": m.content} for m in plan.messages],
        reverted,
    )


def revert_reason(decision: TopicDecision) -> str | None:
    """Why a turn's message reverted the latest automatic reset (`shared_facts`, …), or
    None when it did not."""
    if decision.reason != "reset_reverted":
        return None
    return str(decision.signals.get("reset_revert_reason", "")) or None
