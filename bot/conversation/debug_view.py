"""Debug mode's reply: exactly what the chat model would receive, and why.

Plain text (Telegram and WhatsApp show it as is): the topic decision with its signals
(a reverted reset with its reason), the token budget by part, the system prompt, the
summary with its version facts, the carry-over and the previous case's facts, recall, the
pending and window exchanges verbatim and the new message. Long views are split by the
channel adapters, which know their own limits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory.blocks import CASE_TAG
from memory.engine import Prepared
from memory.policy import Assembly, TooLarge
from memory.types import Exchange, SummaryVersion, TopicDecision

BAR = 20
_L: dict[str, dict[str, str]] = {
    "es": {
        "head": "🔍 MODO DEPURACIÓN — no se llamó al modelo ni se guardó nada",
        "where": "sesión {key} · episodio {episode} · {messages} mensajes en la petición",
        "topic": "tema",
        "continue": "continuar",
        "reset": "REINICIAR",
        "reason": "motivo",
        "reset_note": "un turno real abriría un episodio nuevo: sin resumen ni ventana",
        "reverted_note": (
            "REINICIO DESHECHO ({reason}): el mensaje sigue el caso anterior; el episodio "
            "#{episode} se reabre y este turno se responde en él"
        ),
        "case_head": "caso anterior (episodio #{episode}): {n} datos · motivo: {why}",
        "no_case": "caso anterior: nada (ningún reinicio automático reciente al que se aluda)",
        "previous_hit": "conversación anterior",
        "tokens": "tokens (presupuesto {budget})",
        "system": "sistema",
        "summary": "resumen",
        "recall": "recuerdo",
        "carry_over": "arrastre",
        "carry_head": "arrastrado de conversaciones anteriores: {n} datos del usuario",
        "no_carry": "arrastre: nada",
        "recall_head": "recuerdo: {n} intercambios antiguos en la petición ({found} encontrados)",
        "no_recall": "recuerdo: nada (ningún intercambio antiguo trata de este mensaje)",
        "why": "puntuación {score:.2f} · términos: {terms}",
        "why_near": "cercano en significado al mensaje, sin término en común",
        "pending": "pendientes",
        "window": "ventana",
        "message": "mensaje",
        "total": "total",
        "would_fold": "excede el presupuesto: un turno real resumiría antes {n} intercambios",
        "refused": "RECHAZADO: {tokens} tokens > presupuesto {budget}; no se llamaría al modelo",
        "system_prompt": "prompt de sistema",
        "no_summary": "resumen: ninguno todavía",
        "summary_head": (
            "resumen v{version} · checkpoint #{checkpoint} · prompt {prompt} · modelo {model}"
            " · ronda {round} · cubre #{source_from}–#{source_to} · {tokens} tokens"
        ),
        "pending_head": "pendientes: {n} (tras el checkpoint, se envían tal cual)",
        "window_head": "ventana: {n} intercambios con señal",
        "new_message": "mensaje nuevo",
        "user": "usuario",
        "assistant": "asistente",
    },
    "en": {
        "head": "🔍 DEBUG MODE — the model was not called and nothing was stored",
        "where": "session {key} · episode {episode} · {messages} messages in the request",
        "topic": "topic",
        "continue": "continue",
        "reset": "RESET",
        "reason": "reason",
        "reset_note": "a real turn would open a new episode: no summary, no window",
        "reverted_note": (
            "RESET REVERTED ({reason}): the message continues the previous case; episode "
            "#{episode} is reopened and this turn is answered in it"
        ),
        "case_head": "previous case (episode #{episode}): {n} facts · why: {why}",
        "no_case": "previous case: none (no recent automatic reset referred to)",
        "previous_hit": "previous conversation",
        "tokens": "tokens (budget {budget})",
        "system": "system",
        "summary": "summary",
        "recall": "recall",
        "carry_over": "carry-over",
        "carry_head": "carried over from earlier conversations: {n} facts about the user",
        "no_carry": "carry-over: none",
        "recall_head": "recall: {n} older exchanges in the request ({found} found)",
        "no_recall": "recall: none (no older exchange is about this message)",
        "why": "score {score:.2f} · terms: {terms}",
        "why_near": "near the message in meaning, no term in common",
        "pending": "pending",
        "window": "window",
        "message": "message",
        "total": "total",
        "would_fold": "over budget: a real turn would fold {n} exchanges first",
        "refused": "REFUSED: {tokens} tokens > budget {budget}; the model would not be called",
        "system_prompt": "system prompt",
        "no_summary": "summary: none yet",
        "summary_head": (
            "summary v{version} · checkpoint #{checkpoint} · prompt {prompt} · model {model}"
            " · round {round} · covers #{source_from}–#{source_to} · {tokens} tokens"
        ),
        "pending_head": "pending: {n} (after the checkpoint, sent verbatim)",
        "window_head": "window: {n} signal exchanges",
        "new_message": "new message",
        "user": "user",
        "assistant": "assistant",
    },
}


def render_debug(prepared: Prepared, language: str) -> str:
    """A plain-text view of the request that would be sent for this message."""
    words = _L.get(language, _L["en"])
    plan = prepared.plan
    lines = [words["head"]]
    messages = len(plan.messages) if isinstance(plan, Assembly) else 1
    episode = prepared.state.episode.id
    lines.append(words["where"].format(key=prepared.key, episode=episode, messages=messages))
    lines += _topic(prepared.decision, words)
    if isinstance(plan, TooLarge):
        lines += ["", words["refused"].format(tokens=plan.tokens, budget=plan.budget)]
        return "\n".join(lines)
    lines += _budget(plan, prepared.would_fold, words)
    lines += _section(f"{words['system_prompt']} ({plan.tokens.get('system', 0)} tokens)")
    lines.append(system_prompt_of(plan))
    lines += _summary(plan.summary, plan.tokens.get("summary", 0), words)
    lines += _carry_over(prepared.state.episode.carry_over, plan, words)
    lines += _previous_case(prepared, words)
    lines += _recall(plan, len(prepared.recall), words)
    lines += _exchanges(words["pending_head"].format(n=len(plan.pending)), plan.pending, words)
    lines += _exchanges(words["window_head"].format(n=len(plan.window)), plan.window, words)
    lines += _section(f"{words['new_message']} ({plan.tokens.get('message', 0)} tokens)")
    lines.append(plan.messages[-1].content)
    return "\n".join(lines)


def _section(title: str) -> list[str]:
    return ["", f"── {title} ──"]


def _topic(decision: TopicDecision, words: dict[str, str]) -> list[str]:
    action = words["reset" if decision.reset else "continue"]
    out = [*_section(words["topic"]), f"{action} ({words['reason']}: {decision.reason or '-'})"]
    out += _wrap([f"{name}={_value(value)}" for name, value in sorted(decision.signals.items())])
    if decision.reset:
        out.append(words["reset_note"])
    if decision.reason == "reset_reverted":
        reason = _value(decision.signals.get("reset_revert_reason", "-"))
        episode = decision.signals.get("reverted_episode", "?")
        out.append(words["reverted_note"].format(reason=reason, episode=episode))
    return out


def _wrap(items: list[str], width: int = 76) -> list[str]:
    """`a=1 · b=2 · …` over as few lines as fit in `width`."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(item) + 3 <= width:
            lines[-1] += f" · {item}"
        else:
            lines.append(f"  {item}")
    return lines


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _budget(plan: Assembly, would_fold: int, words: dict[str, str]) -> list[str]:
    tk, budget = plan.tokens, max(plan.budget, 1)
    out = _section(words["tokens"].format(budget=plan.budget))
    for part in ("system", "summary", "carry_over", "recall", "pending", "window", "message"):
        value = tk.get(part, 0)
        out.append(f"{words[part]:<11}{value:>7}  {100 * value / budget:5.1f}%")
    total = tk.get("total", 0)
    filled = min(BAR, round(BAR * total / budget))
    out.append(
        f"{words['total']:<11}{total:>7}  {100 * total / budget:5.1f}%  "
        f"[{'█' * filled}{'·' * (BAR - filled)}] {total}/{plan.budget}"
    )
    if would_fold:
        out.append(words["would_fold"].format(n=would_fold))
    return out


def _summary(summary: SummaryVersion | None, tokens: int, words: dict[str, str]) -> list[str]:
    if summary is None or not summary.text.strip():
        return _section(words["no_summary"])
    head = words["summary_head"].format(
        version=summary.version, checkpoint=summary.checkpoint, prompt=summary.prompt_version,
        model=summary.model, round=summary.round, source_from=summary.source_from,
        source_to=summary.source_to, tokens=tokens,
    )  # fmt: skip
    return [*_section(head), summary.text]


def system_prompt_of(plan: Assembly) -> str:
    """The operator's system prompt, without the memory block the policy appends."""
    head, _, _ = plan.system.partition("\n\n<memory")
    head, _, _ = head.partition("\n\n<about_user")
    head, _, _ = head.partition("\n\n<previous_case")
    head, _, _ = head.partition("\n\n<recall")
    return head


def _carry_over(
    pairs: Sequence[tuple[str, str]], plan: Assembly, words: dict[str, str]
) -> list[str]:
    """The identity facts an automatic reset carried into this episode, as sent."""
    if not pairs:
        return _section(words["no_carry"])
    head = words["carry_head"].format(n=len(pairs))
    out = _section(f"{head} · {plan.tokens.get('carry_over', 0)} tokens")
    return out + [f"{kind}: {value}" for kind, value in pairs]


def _previous_case(prepared: Prepared, words: dict[str, str]) -> list[str]:
    """The closed case's facts riding in this request (`memory.soft_reset`), and why: the
    block's lines as sent (in the chat's words, or bare where the cap made them so)."""
    case, system = prepared.state.episode.previous, _system(prepared)
    start = system.find(f"<{CASE_TAG}>")
    if case is None or prepared.soft is None or start < 0:
        return _section(words["no_case"])
    head = words["case_head"].format(episode=case.episode_id, n=len(case.facts), why=prepared.soft)
    block = system[start : system.index(f"</{CASE_TAG}>", start)]
    return _section(head) + [line[2:] for line in block.splitlines() if line.startswith("- ")]


def _system(prepared: Prepared) -> str:
    return prepared.plan.system if isinstance(prepared.plan, Assembly) else ""


def _recall(plan: Assembly, found: int, words: dict[str, str]) -> list[str]:
    """What recall put in the request, oldest first, with why each one came."""
    hits = plan.recall.hits
    if not hits:
        return _section(words["no_recall"])
    head = words["recall_head"].format(n=len(hits), found=found)
    out = _section(f"{head} · {plan.tokens.get('recall', 0)} tokens")
    sent = _sent_pieces(plan.recall.text)
    for hit in hits:
        ex = hit.exchange
        when = ex.created_at.strftime("%Y-%m-%d %H:%M") if ex.created_at else "?"
        why = words["why"].format(score=hit.score, terms=", ".join(hit.matched))
        why = why if hit.matched else words["why_near"]  # found by the embedding alone
        where = f" · {words['previous_hit']}" if hit.previous else ""
        out.append(f"#{ex.id} · {when}{where} · {why}")
        # As sent: the block may cut a side to what matched (`memory.recall.trim`) or clip
        # the last piece to fit; the operator sees the words the model gets.
        out.append(sent.get(ex.id) or f"#{ex.id} {words['user']}: {ex.user_text}")
    return out


def _sent_pieces(block: str) -> dict[int, str]:
    """Each recalled exchange's text in the block as sent, by exchange number."""
    pieces: dict[int, str] = {}
    for part in block.split("\n\n"):
        if part.startswith("[#"):
            number, _, _ = part[2:].partition("]")
            if number.isdigit():
                pieces[int(number)] = part
    return pieces


def _exchanges(title: str, exchanges: Sequence[Exchange], words: dict[str, str]) -> list[str]:
    out = _section(title)
    for ex in exchanges:
        out.append(f"#{ex.id} {words['user']}: {ex.user_text}")
        out.append(f"#{ex.id} {words['assistant']}: {ex.reply_text}")
    return out
