"""Topic detection by the summary model: a small JSON verdict, read defensively."""

from __future__ import annotations

import json
import re
from importlib import resources

from memory.topic.context import TopicContext, base_signals, precheck
from memory.types import TopicDecision
from providers.base import ChatModel, ChatRequest, Message, ProviderError

PROMPT_VERSION = "topic-v1"
MIN_CONFIDENCE = 0.7
MAX_TOKENS = 120
_SUMMARY_CHARS = 2000
_TURN_CHARS = 600
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def load_prompt(version: str = PROMPT_VERSION) -> str:
    """The prompt file shipped in the `config` package."""
    return resources.files("config").joinpath(f"prompts/{version}.md").read_text("utf-8")


def parse_llm_verdict(text: str) -> TopicDecision:
    """Reset only on a well-formed, confident 'not the same case'; anything else continues."""
    verdict = _verdict(text)
    if verdict is None:
        return TopicDecision("continue", "llm_malformed", {"llm_raw": text[:200]})
    same, closed, confidence, why = verdict
    signals: dict[str, object] = {
        "llm_same_case": same,
        "llm_case_closed": closed,
        "llm_confidence": confidence,
        "llm_reason": why,
    }
    if same:
        return TopicDecision("continue", "llm_same_case", signals)
    if confidence < MIN_CONFIDENCE:
        return TopicDecision("continue", "llm_low_confidence", signals)
    return TopicDecision("reset", "case_closed" if closed else "llm_new_subject", signals)


def _verdict(text: str) -> tuple[bool, bool, float, str] | None:
    found = _OBJECT.search(text)
    if found is None:
        return None
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    same, closed = data.get("same_case"), data.get("case_closed", False)
    confidence, why = data.get("confidence"), data.get("reason", "")
    if not isinstance(same, bool) or not isinstance(closed, bool) or not isinstance(why, str):
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    if not 0.0 <= confidence <= 1.0:
        return None
    return same, closed, float(confidence), why[:200]


async def detect_llm(model: ChatModel, ctx: TopicContext) -> TopicDecision:
    """Ask the model for a verdict; idle and empty episodes are decided before any call."""
    early = precheck(ctx)
    if early is not None:
        return TopicDecision(early.action, early.reason, base_signals(ctx) | early.signals)
    request = ChatRequest(
        system=load_prompt(),
        messages=(Message("user", render(ctx)),),
        max_tokens=MAX_TOKENS,
        purpose="topic",
        language=ctx.language,
    )
    signals = base_signals(ctx) | {"prompt_version": PROMPT_VERSION, "model": model.name}
    try:
        reply = await model.complete(request)
    except ProviderError as exc:
        return TopicDecision("continue", "llm_error", signals | {"llm_error": exc.kind})
    decision = parse_llm_verdict(reply.text)
    return TopicDecision(decision.action, decision.reason, signals | decision.signals)


def render(ctx: TopicContext) -> str:
    """The user message of the topic request: summary, recent exchanges, new message."""
    turns = [
        f"[customer] {_clip(e.user_text, _TURN_CHARS)}\n"
        f"[assistant] {_clip(e.reply_text, _TURN_CHARS)}"
        for e in ctx.window
    ]
    return (
        f"SUMMARY:\n{_clip(ctx.summary, _SUMMARY_CHARS) or '(none)'}\n\n"
        f"RECENT EXCHANGES:\n{chr(10).join(turns) or '(none)'}\n\n"
        f"NEW MESSAGE:\n{ctx.message}"
    )


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
