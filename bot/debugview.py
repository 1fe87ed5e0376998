"""Debug mode's reply: exactly what the chat model would receive, and why."""

from __future__ import annotations

import json

from memory.engine import Prepared
from memory.policy import Assembly, TooLarge

_HEAD = {
    "es": "🔍 MODO DEPURACIÓN — no se llamó al modelo ni se guardó nada",
    "en": "🔍 DEBUG MODE — the model was not called and nothing was stored",
}


def render_debug(prepared: Prepared, language: str) -> str:
    """A plain-text view of the request that would be sent for this message."""
    lines = [_HEAD.get(language, _HEAD["en"]), ""]
    decision = prepared.decision
    lines.append(f"topic: {decision.action} ({decision.reason or '-'})")
    if decision.signals:
        lines.append("  signals: " + json.dumps(decision.signals, ensure_ascii=False, default=str))
    plan = prepared.plan
    if isinstance(plan, TooLarge):
        lines.append(f"REFUSED: {plan.tokens} tokens > budget {plan.budget}; no model call")
        return "\n".join(lines)
    lines += _budget(plan, prepared.would_fold)
    lines += _summary(plan)
    lines.append(f"\n== system ({plan.tokens.get('system', 0)} tokens) ==\n{_system_prompt(plan)}")
    lines += _exchanges("pending (after checkpoint, sent verbatim)", plan.pending)
    lines += _exchanges("window", plan.window)
    lines.append(f"\n== new message ({plan.tokens.get('message', 0)} tokens) ==")
    lines.append(plan.messages[-1].content)
    return "\n".join(lines)


def _budget(plan: Assembly, would_fold: int) -> list[str]:
    tk = plan.tokens
    out = [
        f"tokens: total {tk.get('total', 0)} / budget {plan.budget}"
        f" (system {tk.get('system', 0)}, summary {tk.get('summary', 0)},"
        f" pending {tk.get('pending', 0)}, window {tk.get('window', 0)},"
        f" message {tk.get('message', 0)})"
    ]
    if would_fold:
        out.append(f"over budget: a real turn would fold {would_fold} exchanges first")
    return out


def _summary(plan: Assembly) -> list[str]:
    s = plan.summary
    if s is None:
        return ["\n== summary: none =="]
    return [
        f"\n== summary v{s.version} (checkpoint #{s.checkpoint}, prompt {s.prompt_version},"
        f" model {s.model}, round {s.round}, {plan.tokens.get('summary', 0)} tokens) ==",
        s.text,
    ]


def _system_prompt(plan: Assembly) -> str:
    head, _, _ = plan.system.partition("\n\n<memory")
    return head


def _exchanges(title: str, exchanges: tuple[object, ...]) -> list[str]:
    out = [f"\n== {title}: {len(exchanges)} exchanges =="]
    for ex in exchanges:
        ident = getattr(ex, "id", "?")
        out.append(f"#{ident} user: {getattr(ex, 'user_text', '')}")
        out.append(f"#{ident} assistant: {getattr(ex, 'reply_text', '')}")
    return out
