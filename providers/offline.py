"""A deterministic model for running without keys. It says plainly that it is offline."""

from __future__ import annotations

from .base import ChatReply, ChatRequest, Usage

_TEXTS = {
    "es": (
        "[modo sin conexión] No hay un modelo de IA configurado, así que no puedo razonar "
        "tu mensaje; solo confirmo que lo recibí: «{quote}». Tengo presentes {n} mensajes "
        "anteriores{memo}."
    ),
    "en": (
        "[offline mode] No AI model is configured, so I cannot think about your message; "
        "I can only confirm I received it: “{quote}”. I have {n} earlier messages in view{memo}."
    ),
}
_MEMO = {"es": " y un resumen de lo anterior", "en": " and a summary of what came before"}
_QUOTE_CHARS = 120


class OfflineChatModel:
    """Echoes a short, honest answer; same input, same output, no network."""

    def __init__(self, name: str = "offline") -> None:
        self.name = name

    async def complete(self, request: ChatRequest) -> ChatReply:
        lang = request.language if request.language in _TEXTS else "en"
        last = request.messages[-1].content if request.messages else ""
        quote = " ".join(last.split())
        if len(quote) > _QUOTE_CHARS:
            quote = quote[: _QUOTE_CHARS - 1] + "…"
        has_memo = any("<memory" in m.content for m in request.messages) or (
            "<memory" in request.system
        )
        text = _TEXTS[lang].format(
            quote=quote, n=len(request.messages) - 1, memo=_MEMO[lang] if has_memo else ""
        )
        # No tokenizer here: report no usage rather than a guess that would skew budgets.
        return ChatReply(text=text, stop_reason="end", usage=Usage(), model=self.name)
