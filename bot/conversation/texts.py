"""The bot's own words, in Spanish and English. Model replies are not translated."""

from __future__ import annotations

from typing import Any

TEXTS: dict[str, dict[str, str]] = {
    "es": {
        "start": "¡Hola! Soy tu asistente. Escríbeme lo que necesites; recuerdo la "
        "conversación aunque dure días. Usa /help para ver los comandos.",
        "help": "Comandos:\n/reset — empezar de cero (la conversación anterior se archiva)\n"
        "/undo — deshacer el último reinicio\n/summary — lo que recuerdo ahora\n"
        "/forget — borrar todos tus datos\n/help — esta ayuda",
        "help_operator": "\n/debug on|off — modo depuración (solo operadores)"
        "\n/usage [all] — tokens y coste estimado (solo operadores)",
        "reset": "Listo, empezamos de cero. Si fue un error, /undo recupera la conversación.",
        "auto_reset": "(Parece un tema nuevo, así que empecé una conversación nueva. "
        "Si no era eso, escribe /undo para recuperar la anterior.)",
        "auto_revert": "(Seguimos con tu caso anterior: recuperé esa conversación.)",
        "undo_ok": "Recuperé la conversación anterior.",
        "undo_none": "No hay un reinicio reciente que deshacer.",
        "forget_confirm": "Esto borrará para siempre todo lo que guardé de esta conversación. "
        "Para confirmar, escribe: /forget confirm",
        "forget_done": "Borré todos tus datos. Si me escribes de nuevo, empezaremos de cero.",
        "slow_down": "Vas muy rápido: tengo {count} mensajes tuyos pendientes. Espera mis "
        "respuestas; lo que envíes hasta entonces no lo leeré.",
        "forget_not_admin": "En un grupo, solo un administrador del grupo (o un operador) "
        "puede borrar la conversación de todos.",
        "forget_pending": "Eliminé tus datos de la conversación; las últimas copias se "
        "borrarán en breve, en cuanto termine una lectura en curso.",
        "summary_empty": "Todavía no hemos hablado de nada en esta conversación, así que no "
        "hay nada que recordar aún.",
        "summary_none": "Aún no tengo un resumen: recuerdo palabra por palabra todo lo que "
        "hablamos hasta ahora (intercambios: {count}).",
        "summary": "Esto es lo que recuerdo de la conversación (versión {version}):\n\n{text}",
        "debug_on": "Modo depuración activado: te mostraré lo que recibiría el modelo, sin "
        "llamarlo ni guardar nada. /debug off para salir.",
        "debug_off": "Modo depuración desactivado.",
        "debug_usage": "Uso: /debug on o /debug off",
        "usage_usage": "Uso: /usage (esta conversación) o /usage all (todas)",
        "not_operator": "Lo siento, ese comando no está disponible.",
        "not_allowed": "Lo siento, este asistente no está disponible para tu cuenta.",
        "unknown_command": "No conozco ese comando. /help muestra los disponibles.",
        "only_text": "Por ahora solo entiendo mensajes de texto. ¿Me lo escribes?",
        "empty": "Tu mensaje llegó vacío. ¿Me lo escribes de nuevo?",
        "too_long": "Tu mensaje es demasiado largo ({chars} caracteres; el máximo es {limit}). "
        "¿Puedes dividirlo en partes más cortas?",
        "too_large": "Tu mensaje no cabe en lo que puedo procesar de una vez. ¿Puedes "
        "acortarlo o dividirlo?",
        "memory_unavailable": "Ahora mismo no puedo ordenar la memoria de esta conversación "
        "para responderte. Inténtalo de nuevo en unos minutos; no se perdió nada.",
        "error_rate_limited": "Estoy recibiendo muchas consultas ahora mismo. Inténtalo de "
        "nuevo en un momento.",
        "error_overloaded": "El servicio de IA está saturado. Inténtalo de nuevo en unos minutos.",
        "error_timeout": "La respuesta está tardando demasiado. Inténtalo de nuevo, por favor.",
        "error_quota_exhausted": "El servicio de IA no está disponible ahora (cuota agotada). "
        "Ya avisamos al equipo.",
        "error_auth": "El servicio de IA no está bien configurado. Ya avisamos al equipo.",
        "error_context_too_long": "La conversación es demasiado larga para el modelo. Prueba "
        "/reset para empezar de cero.",
        "error_generic": "Lo siento, no pude responder esta vez. Inténtalo de nuevo.",
        "error_store": "Lo siento, ahora mismo no puedo guardar esta conversación. Tengo tu "
        "mensaje y lo responderé en cuanto pueda.",
        "truncated": "\n\n(La respuesta se cortó por su longitud.)",
        "welcome_console": "ventana · consola · sesión {key} · modelo {model}\n"
        "Escribe y pulsa Enter. /help para comandos, /quit o Ctrl-D para salir.",
        "console_debug_run": "Modo depuración activado solo en esta ejecución: no se llama al "
        "modelo ni se guarda nada. /debug off lo desactiva ya.",
        "console_debug_kept": "Modo depuración activado (sigue de un /debug on anterior): no "
        "se llama al modelo ni se guarda nada. /debug off para desactivarlo.",
    },
    "en": {
        "start": "Hi! I'm your assistant. Tell me what you need; I remember the conversation "
        "even if it lasts for days. /help lists the commands.",
        "help": "Commands:\n/reset — start over (the previous conversation is archived)\n"
        "/undo — undo the last reset\n/summary — what I remember now\n"
        "/forget — erase all your data\n/help — this help",
        "help_operator": "\n/debug on|off — debug mode (operators only)"
        "\n/usage [all] — tokens and estimated cost (operators only)",
        "reset": "Done, we start over. If that was a mistake, /undo brings the conversation back.",
        "auto_reset": "(This looks like a new subject, so I started a fresh conversation. If "
        "not, send /undo to bring the previous one back.)",
        "auto_revert": "(We are back on your previous case: I brought that conversation back.)",
        "undo_ok": "I brought the previous conversation back.",
        "undo_none": "There is no recent reset to undo.",
        "forget_confirm": "This will permanently erase everything I stored about this "
        "conversation. To confirm, send: /forget confirm",
        "forget_done": "I erased all your data. If you write again, we start from scratch.",
        "slow_down": "You are going too fast: {count} of your messages are waiting. Wait for "
        "my replies; I will not read what you send until then.",
        "forget_not_admin": "In a group, only a group administrator (or an operator) can "
        "erase everyone's conversation.",
        "forget_pending": "I deleted your data from the conversation; the last copies will "
        "be wiped shortly, as soon as a read in progress ends.",
        "summary_empty": "We haven't talked about anything in this conversation yet, so there "
        "is nothing to remember so far.",
        "summary_none": "I have no summary yet: I remember everything we said so far word for "
        "word (exchanges: {count}).",
        "summary": "This is what I remember of our conversation (version {version}):\n\n{text}",
        "debug_on": "Debug mode on: I'll show what the model would receive, without calling "
        "it or storing anything. /debug off to leave.",
        "debug_off": "Debug mode off.",
        "debug_usage": "Usage: /debug on or /debug off",
        "usage_usage": "Usage: /usage (this chat) or /usage all (every chat)",
        "not_operator": "Sorry, that command is not available.",
        "not_allowed": "Sorry, this assistant is not available for your account.",
        "unknown_command": "I don't know that command. /help lists the available ones.",
        "only_text": "For now I only understand text messages. Could you type it?",
        "empty": "Your message arrived empty. Could you send it again?",
        "too_long": "Your message is too long ({chars} characters; the limit is {limit}). "
        "Could you split it into shorter parts?",
        "too_large": "Your message does not fit in what I can process at once. Could you "
        "shorten or split it?",
        "memory_unavailable": "I can't organise this conversation's memory to answer right "
        "now. Please try again in a few minutes; nothing was lost.",
        "error_rate_limited": "I'm getting a lot of requests right now. Please try again in "
        "a moment.",
        "error_overloaded": "The AI service is overloaded. Please try again in a few minutes.",
        "error_timeout": "The answer is taking too long. Please try again.",
        "error_quota_exhausted": "The AI service is unavailable right now (quota used up). "
        "The team has been told.",
        "error_auth": "The AI service is misconfigured. The team has been told.",
        "error_context_too_long": "This conversation is too long for the model. Try /reset "
        "to start over.",
        "error_generic": "Sorry, I couldn't answer this time. Please try again.",
        "error_store": "Sorry, I can't save this conversation right now. I have your message "
        "and will answer it as soon as I can.",
        "truncated": "\n\n(The answer was cut short because of its length.)",
        "welcome_console": "ventana · console · session {key} · model {model}\n"
        "Type and press Enter. /help for commands, /quit or Ctrl-D to leave.",
        "console_debug_run": "Debug mode is on for this run only: the model is not called "
        "and nothing is stored. /debug off switches it off now.",
        "console_debug_kept": "Debug mode is on (left on by an earlier /debug on): the model "
        "is not called and nothing is stored. /debug off switches it off.",
    },
}


def t(language: str, name: str, **values: Any) -> str:
    table = TEXTS.get(language, TEXTS["en"])
    return table[name].format(**values) if values else table[name]


def error_text(language: str, kind: str) -> str:
    name = f"error_{kind}"
    return t(language, name if name in TEXTS["en"] else "error_generic")
