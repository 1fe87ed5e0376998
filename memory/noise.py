"""The noise filter: decides whether a model reply is signal or noise, and why.

Pure: the reply, the error and the previous reply in, a stable reason (or None) out.
Noise is stored with its reason but never enters the window or the summary.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections import Counter
from functools import lru_cache

from memory.text.accents import strip_marks
from providers.base import ChatReply, ProviderError

EMPTY = "empty"
TRUNCATED = "truncated"
GENERIC_FAILURE = "generic_failure"
REPEAT = "repeat"
REPETITION_LOOP = "repetition_loop"
PROVIDER_ERROR = "provider_error"
STOP_ERROR_KIND = "stop_error"  # a reply the adapter marked with stop_reason="error"

# A generic failure reply is short; longer texts are treated as attempts to help.
_GENERIC_MAX_CHARS = 320

_WHAT_EN = r"(?: (?:that|this|it|your|the)(?: request| question| conversation| one| topic)?)?"
# Whole sentences (normalized: lowercase, no accents, no punctuation) that say nothing but
# "I failed". A reply is generic when every sentence is a failure or a filler sentence.
_FAILURE = [
    r"(?:(?:i m|im|i am) (?:so |very |really )?sorry|sorry|i apologi[sz]e|apologies)"
    r"(?: but)?(?: i)? (?:can ?t|cannot|can not|am unable to|m unable to|am not able to"
    r"|won ?t be able to|m not able to|could not|couldn ?t) (?:help|assist|do that|answer"
    r"|respond|summari[sz]e)(?: you)?(?: with)?" + _WHAT_EN,
    r"i (?:can ?t|cannot|can not|am unable to|m unable to|am not able to|m not able to)"
    r" (?:help|assist|do that|answer|respond|summari[sz]e)(?: you)?(?: with)?" + _WHAT_EN,
    r"(?:oops )?something went wrong(?: on my end| here)?",
    r"(?:an? )?(?:unexpected |internal |unknown )?error (?:has )?occurred"
    r"(?: while (?:processing|generating) (?:your|the) (?:request|response))?",
    r"(?:unable to|failed to|could not|couldn t) (?:generate|process|complete) (?:a |the |your )?"
    r"(?:response|request|reply|answer)",
    r"as an ai(?: language model| assistant| model)?(?: i (?:can ?t|cannot|don ?t|do not|am"
    r" unable to|am not able to)\b.{0,80})?",
    r"(?:(?:lo siento|lo lamento|disculpa|disculpe|perdon|perdona|perdone)(?: mucho)? )?"
    r"(?:pero )?no (?:puedo|podre|me es posible|es posible|soy capaz de) (?:ayudarte|ayudarle"
    r"|ayudar|asistirte|asistirle|responder(?:te|le)?|hacer eso|resumir)(?: con| a)?"
    r"(?: (?:eso|esto|esa solicitud|tu solicitud|su solicitud|tu pregunta|su pregunta"
    r"|esta conversacion))?",
    r"(?:ups )?(?:(?:ha|han) )?(?:ocurrido|ocurrio|hubo|se (?:ha )?produjo|se ha producido"
    r"|surgio) un (?:error|problema)(?: inesperado| interno| desconocido)?"
    r"(?: al (?:procesar|generar) (?:tu|su|la) (?:solicitud|respuesta|mensaje))?",
    r"(?:ups )?algo (?:salio|ha salido) mal",
    r"no (?:pude|he podido|se pudo) (?:generar|procesar|completar) (?:una |la |tu |su )?"
    r"(?:respuesta|solicitud)",
    r"como (?:un |una )?(?:modelo de lenguaje|ia|inteligencia artificial|asistente de ia)"
    r"(?: de ia)?(?: no (?:puedo|tengo|soy)\b.{0,80})?",
]
_FILLER = [
    r"(?:(?:i m|i am) )?(?:so |very |really |terribly )?sorry(?: about that)?",
    r"(?:i (?:do )?apologi[sz]e|(?:my )?apologies)",
    r"(?:lo siento|lo lamento|disculpa|disculpe|(?:mis )?disculpas|perdon|perdona|perdone)"
    r"(?: mucho)?",
    r"(?:please|por favor|oops|ups|vaya|uh oh|hmm)",
    r"(?:please )?(?:try again|retry)(?: later| in a (?:moment|few minutes))?(?: please)?",
    r"(?:is there )?anything else (?:i can (?:help you with|do for you|help with)|you need)",
    r"(?:please )?(?:contact|reach out to) (?:support|the administrator)",
    r"(?:por favor )?(?:intentalo|intentelo|intenta|intente|vuelve a intentarlo"
    r"|vuelva a intentarlo|prueba|pruebe)(?: de nuevo| otra vez| nuevamente)?(?: mas tarde"
    r"| en unos (?:minutos|momentos))?(?: por favor)?",
    r"(?:hay )?algo mas en (?:lo )?(?:que|lo que) (?:pueda|puedo) (?:ayudarte|ayudarle|ayudar)",
    r"(?:por favor )?(?:contacta|contacte) (?:con )?(?:soporte|el administrador)",
]
_FAILURE_RE = re.compile(
    r"(?:but |pero |however |sin embargo )?(?:" + "|".join(f"(?:{p})" for p in _FAILURE) + ")"
)
_FILLER_RE = re.compile("|".join(f"(?:{p})" for p in _FILLER))
_SENTENCE_SPLIT = re.compile(r"[.,!?¡¿;:\n]+")
# Also checked without splitting at commas: "As an AI model, I cannot …" is one thought.
_CLAUSE_SPLIT = re.compile(r"[.!?¡¿;:\n]+")
_NON_WORD = re.compile(r"[^a-z0-9 ]+")

# Repetition loops: a run of the same n-gram repeated at least this many times in a row.
_LOOP_MIN_REPEATS = {1: 12, 2: 8, 3: 8}
_LOOP_DEFAULT_REPEATS = 5
_LOOP_MAX_NGRAM = 12
_LOOP_NEEDED = {
    n: _LOOP_MIN_REPEATS.get(n, _LOOP_DEFAULT_REPEATS) for n in range(1, _LOOP_MAX_NGRAM + 1)
}
_LOOP_MIN_COPIES = min(_LOOP_NEEDED.values())
_LOOP_MIN_SPAN = min(n * needed for n, needed in _LOOP_NEEDED.items())
# Or: one sentence of 4+ words occurring 4+ times, its copies covering 40 % of the text.
_LOOP_SENTENCE_COUNT = 4
_LOOP_SENTENCE_MIN_WORDS = 4
_LOOP_SENTENCE_SHARE = 0.4


def classify(
    reply: ChatReply | None,
    *,
    error: ProviderError | None = None,
    previous_reply: str | None = None,
) -> str | None:
    """Return the noise reason for this reply, or None when it is signal."""
    if error is not None:
        return f"{PROVIDER_ERROR}:{error.kind}"
    if reply is None or not reply.text.strip():
        return EMPTY
    if reply.stop_reason == "max_tokens":
        return TRUNCATED
    if reply.stop_reason == "error":
        return f"{PROVIDER_ERROR}:{STOP_ERROR_KIND}"
    return text_noise(reply.text, previous_reply=previous_reply)


def text_noise(text: str, *, previous_reply: str | None = None) -> str | None:
    """The text-only rules (empty, generic failure, repeat, loop); shared with the guard."""
    if not text.strip():
        return EMPTY
    if is_generic_failure(text):
        return GENERIC_FAILURE
    if previous_reply is not None and _squash(text) == _squash(previous_reply):
        return REPEAT
    if is_repetition_loop(text):
        return REPETITION_LOOP
    return None


def is_generic_failure(text: str) -> bool:
    """True when the whole text is a short apology/failure with nothing helpful in it."""
    if len(text) > _GENERIC_MAX_CHARS:
        return False
    return any(_all_failure(splitter.split(text)) for splitter in (_SENTENCE_SPLIT, _CLAUSE_SPLIT))


def _all_failure(parts: list[str]) -> bool:
    """Every non-empty sentence a failure or a filler, and at least one a failure. One pass
    that stops at the first sentence of substance (most replies: the first one)."""
    failure = False
    for part in parts:
        sentence = _normalize(part)
        if not sentence:
            continue
        if _FAILURE_RE.fullmatch(sentence):
            failure = True
        elif not _FILLER_RE.fullmatch(sentence):
            return False
    return failure


def is_repetition_loop(text: str) -> bool:
    """True for degenerate output: an n-gram, line or sentence repeated over and over."""
    words = _normalize(text).split()
    return _has_ngram_run(words) or _has_repeated_sentence(text)


def _has_ngram_run(words: list[str]) -> bool:
    """True when some n-gram (n <= 12) comes `needed` times in a row.

    `run` equal words n apart make run // n + 1 copies of an n-gram, so `needed` copies
    are a run of (needed - 1) * n equal positions: found as a substring of the 0/1 bytes
    of `words[i] == words[i + n]`, one C-level pass per n instead of a Python loop."""
    if not _may_loop(words):
        return False
    for n, needed in _LOOP_NEEDED.items():
        same = bytes(map(operator.eq, words, words[n:]))
        if same and b"\x01" * ((needed - 1) * n) in same:
            return True
    return False


def _may_loop(words: list[str]) -> bool:
    """Whether `_LOOP_MIN_SPAN` words in a row each occur `_LOOP_MIN_COPIES` times or more.

    `needed` copies of an n-gram are needed * n words in a row, each of them `needed`
    times, so every loop has such a stretch; ordinary replies have none and skip the
    twelve passes of `_has_ngram_run`."""
    if len(words) < _LOOP_MIN_SPAN:  # too short to hold such a stretch
        return False
    frequent = {w for w, count in Counter(words).items() if count >= _LOOP_MIN_COPIES}
    if not frequent:
        return False
    return b"\x01" * _LOOP_MIN_SPAN in bytes(map(frequent.__contains__, words))


def _has_repeated_sentence(text: str) -> bool:
    parts = _SENTENCE_SPLIT.split(text)
    if len(parts) < _LOOP_SENTENCE_COUNT:  # no sentence can come that many times
        return False
    sentences = [_normalize(s) for s in parts]
    long_ones = [s for s in sentences if len(s.split()) >= _LOOP_SENTENCE_MIN_WORDS]
    if not long_ones:
        return False
    counts = Counter(long_ones)
    sentence, count = counts.most_common(1)[0]
    total = sum(len(s) for s in sentences if s) or 1
    return count >= _LOOP_SENTENCE_COUNT and len(sentence) * count / total >= _LOOP_SENTENCE_SHARE


@lru_cache(maxsize=4096)
def _normalize(text: str) -> str:
    """Lowercase, strip accents and punctuation, collapse spaces ("I’m" -> "i m")."""
    plain = strip_marks(unicodedata.normalize("NFKD", text.casefold()))
    return " ".join(_NON_WORD.sub(" ", plain).split())


def _squash(text: str) -> str:
    return " ".join(text.casefold().split())
