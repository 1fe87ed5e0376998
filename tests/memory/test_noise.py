"""The noise filter: each rule, in Spanish and English, and signals it must not flag."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import noise
from memory.noise import classify, is_repetition_loop, text_noise
from providers.base import ChatReply, ContextTooLong, ProviderError, RateLimited


def reply(text: str, stop: str = "end") -> ChatReply:
    return ChatReply(text=text, stop_reason=stop)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "Lo siento, no puedo ayudarte con eso.",
        "Lo siento, pero no puedo ayudarte con esa solicitud. "
        "¿Hay algo más en lo que pueda ayudarte?",
        "Ha ocurrido un error.",
        "Ha ocurrido un error. Por favor, inténtalo de nuevo más tarde.",
        "Ups, algo salió mal. Vuelve a intentarlo.",
        "Se ha producido un error inesperado al procesar tu solicitud.",
        "Disculpa, no puedo responder a eso.",
        "Como modelo de lenguaje de IA, no puedo acceder a esa información.",
        "No pude generar una respuesta.",
        "I'm sorry, I can't help with that.",
        "I’m sorry, but I cannot assist with that request.",
        "Something went wrong, please try again.",
        "Something went wrong. Please try again later.",
        "An error occurred while processing your request.",
        "As an AI language model I cannot do that.",
        "As an AI language model, I don't have personal opinions.",
        "Sorry, I can't help with that. Is there anything else I can help you with?",
        "Unable to generate a response.",
        "  I apologize, but I'm unable to help with this.  ",
    ],
)
def test_generic_failures_are_noise(text: str) -> None:
    """Short generic apology/failure texts in both languages are generic_failure."""
    assert classify(reply(text)) == "generic_failure"


@pytest.mark.parametrize(
    "text",
    [
        "Sorry to hear that. Let's fix it: open Settings > Account and press Reset.",
        "Sorry to hear that! Your order #4821 ships tomorrow.",
        "Lo siento mucho por la espera. Tu pedido #4821 sale mañana.",
        "Lo siento, no puedo ayudarte con eso, pero puedes llamar al 900 123 456.",
        "I can't help with refunds directly, but the billing team can: billing@example.com.",
        "No, no puedo cambiar la fecha: la reserva ya está confirmada para el 19 de julio.",
        "Ha ocurrido un error en tu pago porque la tarjeta caducó; prueba con otra tarjeta.",
        "Something went wrong with the build because the DNS record is missing. Add it.",
        "As an AI I cannot see your screen, but the error 0x80070005 means access denied: "
        "run the installer as administrator.",
        "Sí.",
        "No.",
        "Gracias a ti.",
        "jajaja, claro que sí",
        "ja ja ja, muy bueno",
        "No, no, no: el plazo es el viernes.",
        "Muy, muy bien.",
        "Error 404 means the page does not exist; check the URL.",
    ],
)
def test_tricky_signals_are_not_flagged(text: str) -> None:
    """Helpful replies that merely start with an apology or mention errors are signal."""
    assert classify(reply(text)) is None


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_replies(text: str) -> None:
    """Empty or whitespace-only replies are noise 'empty'."""
    assert classify(reply(text)) == "empty"


def test_missing_reply_is_empty() -> None:
    """No reply at all (and no error) is noise 'empty'."""
    assert classify(None) == "empty"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (RateLimited(), "provider_error:rate_limited"),
        (ContextTooLong(), "provider_error:context_too_long"),
        (ProviderError(), "provider_error:provider_error"),
    ],
)
def test_provider_errors(error: ProviderError, reason: str) -> None:
    """A provider error wins over any reply and carries its stable kind."""
    assert classify(reply("fine text"), error=error) == reason
    assert classify(None, error=error) == reason


def test_truncated_reply() -> None:
    """A reply stopped at the token limit is noise 'truncated'."""
    assert classify(reply("The steps are: 1. open the", "max_tokens")) == "truncated"


def test_reply_marked_error_by_adapter() -> None:
    """A reply the adapter marked stop_reason='error' is a provider error."""
    assert classify(reply("partial", "error")) == "provider_error:stop_error"


@pytest.mark.parametrize(
    ("previous", "text"),
    [
        ("Tu pedido #4821 sale mañana.", "Tu pedido #4821 sale mañana."),
        ("Tu pedido #4821 sale mañana.", "  tu PEDIDO   #4821 sale mañana. \n"),
        ("Your order ships tomorrow.", "your order ships\ntomorrow."),
    ],
)
def test_exact_repeat_of_previous_reply(previous: str, text: str) -> None:
    """The same reply again, up to whitespace and case, is noise 'repeat'."""
    assert classify(reply(text), previous_reply=previous) == "repeat"


def test_similar_but_different_reply_is_signal() -> None:
    """A reply that differs in content from the previous one is signal."""
    text = "Tu pedido #4822 sale mañana."
    assert classify(reply(text), previous_reply="Tu pedido #4821 sale mañana.") is None


@pytest.mark.parametrize(
    "text",
    [
        "the " * 30,
        "Claro " + "que sí " * 20,
        "Sure, here it is: " + "I will help you. " * 6,
        ("Revisa la configuración del router y reinícialo por completo.\n" * 5),
        "Paso 1: abre la app. " + "Luego pulsa en ajustes y después vuelve atrás. " * 5,
        "x y z w " * 10,
    ],
)
def test_repetition_loops(text: str) -> None:
    """Degenerate loops (a word, phrase, line or paragraph over and over) are noise."""
    assert classify(reply(text)) == "repetition_loop"


@pytest.mark.parametrize(
    "text",
    [
        "1. Abre la app.\n2. Abre ajustes.\n3. Abre la cuenta.\n4. Abre el perfil.",
        "- Haz clic en Guardar.\n- Escribe tu nombre.\n- Haz clic en Guardar.",
        "Very very good, really really nice.",
        "ha " * 6,
        "| Sí | Sí | No |\n" * 6,
        "Checked the router. Checked the cable. Checked the modem. Checked the wall socket.",
    ],
)
def test_legit_repetition_is_not_a_loop(text: str) -> None:
    """Lists, tables and ordinary emphasis are not repetition loops."""
    assert not is_repetition_loop(text)


def test_order_of_rules() -> None:
    """Empty is checked before truncation, truncation before text rules."""
    assert classify(reply("   ", "max_tokens")) == "empty"
    assert classify(reply("Lo siento, no puedo ayudarte con eso.", "max_tokens")) == "truncated"


def test_text_noise_without_previous() -> None:
    """text_noise (used by the summary guard) applies only the text rules."""
    assert text_noise("Ha ocurrido un error.") == "generic_failure"
    assert text_noise("Tu pedido sale mañana.") is None


def test_long_text_with_failure_phrase_is_signal() -> None:
    """A long reply that contains a failure phrase among real content is signal."""
    text = "Ha ocurrido un error. " + "Estos son los pasos para resolverlo con calma. " * 3
    assert classify(reply(text)) is None


def _reference_ngram_run(words: list[str]) -> bool:
    """The original scan: `run` equal words n apart are run // n + 1 copies of an n-gram."""
    from memory.noise import _LOOP_DEFAULT_REPEATS, _LOOP_MAX_NGRAM, _LOOP_MIN_REPEATS

    for n in range(1, _LOOP_MAX_NGRAM + 1):
        needed = _LOOP_MIN_REPEATS.get(n, _LOOP_DEFAULT_REPEATS)
        run = 0
        for i in range(len(words) - n):
            run = run + 1 if words[i] == words[i + n] else 0
            if run // n + 1 >= needed:
                return True
    return False


_few_words = st.lists(st.sampled_from("abcde"), max_size=40)


@settings(max_examples=300)
@given(
    before=_few_words,
    gram=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=13),
    copies=st.integers(min_value=1, max_value=13),
    after=_few_words,
    typo=st.integers(min_value=-1, max_value=200),
)
def test_ngram_run_equals_the_plain_scan(
    before: list[str], gram: list[str], copies: int, after: list[str], typo: int
) -> None:
    """The bytes search and its frequent-words pre-check answer as the word-by-word scan,
    near every threshold (copies of 1- to 13-grams, one word maybe replaced)."""
    from memory.noise import _has_ngram_run

    words = before + gram * copies + after
    if 0 <= typo < len(words):
        words[typo] = "x"
    assert _has_ngram_run(words) == _reference_ngram_run(words)


def test_a_reply_cut_at_the_size_cap_is_truncated_noise_even_when_empty() -> None:
    """A capped reply (the adapter dropped a body past its byte limit unread) is noise."""
    assert noise.classify(ChatReply("", "max_tokens", capped=True)) == noise.TRUNCATED
    assert noise.classify(ChatReply("x" * 20, "max_tokens", capped=True)) == noise.TRUNCATED
