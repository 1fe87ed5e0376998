"""A summary model that loses everything: the fact guard still gets every planted fact of
every kind to the chat request at turn 300 (the real engine, store and fold service)."""

from __future__ import annotations

import random

import pytest
import structlog.testing

from memory.facts import extract_facts
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.summarizer import ModelSummarizer, Summarizer
from memory.policy import Assembly
from memory.tokens import default_tokenizer
from providers.base import ChatReply, ChatRequest, Usage
from tests.memory.fold.fold_support import engine_over
from tests.support.fakes import ScriptedChatModel

KEY = "console:lossy"
VAGUE = "El cliente tuvo un problema y se le ayudó."
TURNS = 300

# The opening of a long case: every kind of hard fact, as a customer gives them.
OPENING = [
    (
        "Hola, soy Marta Ruiz, de la empresa Construcciones Pérez S.L. Mi número de cliente "
        "48213.",
        "Hola Marta, gracias. ¿En qué puedo ayudarte?",
    ),
    (
        "La IP del servidor es 185.42.17.9 y el DNS primario es ns1.example.net; la tienda "
        "está en shop.example.es y no carga.",
        "Reviso el servidor y la tienda.",
    ),
    ("Su IPv6 es 2001:db8:85a3::8a2e:370:7334, por si acaso.", "Apuntada."),
    (
        "Para el abono usad el IBAN ES91 2100 0418 4502 0005 1332. Mi cuenta es 12345678.",
        "Anotado para el abono.",
    ),
    ("Tengo la póliza 0045-778 de mantenimiento.", "Vista la póliza."),
    (
        "El router nuevo vino con el seguimiento PK123456789ES a la calle Alcalá 214, "
        "28028 Madrid.",
        "Consta entregado.",
    ),
    ("La furgoneta del técnico, matrícula 1234 BCD, puede usar el vado.", "Se lo digo."),
    (
        "Mi móvil es +34 612 345 678 y el correo marta.ruiz@example.com.",
        "Datos de contacto guardados.",
    ),
    (
        "El cargo fue de 1.250,50 € el 3 de marzo, factura FAC-2024-0012.",
        "Te llamo el martes a las 10:00 con lo del cargo.",
    ),
    ("Our UK office's account number is 1234-5678-9012, in case they call.", "Noted."),
]
PLANTED = [
    "Marta Ruiz",
    "Construcciones Pérez S.L",
    "48213",
    "185.42.17.9",
    "ns1.example.net",
    "shop.example.es",
    "2001:db8:85a3::8a2e:370:7334",
    "ES91 2100 0418 4502 0005 1332",
    "12345678",
    "0045-778",
    "PK123456789ES",
    "calle Alcalá 214",
    "28028",
    "1234 BCD",
    "+34 612 345 678",
    "marta.ruiz@example.com",
    "1.250,50 €",
    "3 de marzo",
    "FAC-2024-0012",
    "10:00",
    "1234-5678-9012",
]


class VagueModel:
    """A summary model that answers one vague sentence, whatever it is asked."""

    name = "vague"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.calls += 1
        return ChatReply(VAGUE, "end", Usage(500, 12), self.name)


def _routine(rng: random.Random, n: int) -> tuple[str, str]:
    """The long middle: attempts with their times and status percentages."""
    hour, minute = rng.randint(8, 21), rng.choice(["00", "15", "30", "45"])
    load = rng.randint(20, 99)
    tries = (
        f"Lo probé a las {hour}:{minute} y la web sigue al {load} % de CPU.",
        f"Otra prueba a las {hour}:{minute}: el panel marca {load} % de memoria.",
        f"He reiniciado el servicio a las {hour}:{minute}, va algo mejor ({load} %).",
        f"Nada, a las {hour}:{minute} volvió a ir lenta la tienda.",
    )
    answers = (
        f"Anoto la prueba {n}. Probemos a vaciar la caché del servidor.",
        f"Gracias. Revisaré los registros de las {hour}:{minute}.",
        "Entendido, seguimos vigilando el consumo.",
    )
    return rng.choice(tries), rng.choice(answers)


async def _last_request(summarizer: Summarizer) -> tuple[str, str, int]:
    chat = ScriptedChatModel()
    setup = engine_over(
        summarizer,
        default_tokenizer(),
        chat,
        window=6,
        fold_batch=4,
        summary_tokens=800,
        system="Eres soporte.",
    )
    rng = random.Random(19)
    turns = OPENING + [_routine(rng, n) for n in range(len(OPENING), TURNS - 1)]
    async with setup as (store, folds, engine):
        for user, reply in turns:
            chat.script.append(reply)
            prepared = await engine.prepare(KEY, user)
            assert isinstance(prepared.plan, Assembly)
            await engine.record(prepared, await engine.call(prepared), shown=(reply,))
            await folds.drain()
        prepared = await engine.prepare(KEY, "¿Cómo va lo mío?", dry_run=True)
        assert isinstance(prepared.plan, Assembly)
        plan = prepared.plan
        text = plan.system + "\n".join(m.content for m in plan.messages)
        state = await store.peek_state(KEY, 6)
        assert state is not None
        versions = len(await store.summaries(state.episode.id))
        return text, plan.summary.text if plan.summary else "", versions


@pytest.mark.parametrize("kind", ["lossy", "offline"])
async def test_every_planted_fact_reaches_the_request_at_turn_300(kind: str) -> None:
    """A summary model that says only 'El cliente tuvo un problema…' (and the offline
    one): every fact of every kind from the opening is in the turn-300 request."""
    model = VagueModel()
    summarizer: Summarizer = (
        ModelSummarizer(model) if kind == "lossy" else ExtractiveSummarizer(default_tokenizer())
    )
    text, summary, versions = await _last_request(summarizer)
    assert versions > 50  # folds happened all along and were accepted
    if kind == "lossy":
        assert summary.startswith(VAGUE)
        assert model.calls > 50
    # Salience: the times and percentages of ~290 routine attempts are no key facts;
    # the one tied to a commitment ("te llamo el martes a las 10:00") is.
    section = summary.split("Datos clave:")[-1]
    incidental = [f.value for f in extract_facts(section) if f.kind in ("time", "percent")]
    assert incidental == ["10:00"]
    missing = [value for value in PLANTED if value not in text]
    assert missing == []


async def test_dropped_facts_are_logged_by_kind_values_only_at_debug() -> None:
    """When the key-facts cap sheds facts, the info event names their kinds and count;
    their values (user data) appear only in a debug event."""
    chat = ScriptedChatModel()
    summarizer = ModelSummarizer(VagueModel())
    setup = engine_over(
        summarizer, default_tokenizer(), chat, window=2, fold_batch=2, summary_tokens=60
    )
    async with setup as (_store, folds, engine):
        with structlog.testing.capture_logs() as logs:
            for i in range(8):
                user = f"Pedido #PED-{i}01 y ticket INC-{i}02, factura FAC-{i}03, ref ZX-{i}04."
                chat.script.append(f"Anotado el caso {i}.")  # distinct: a repeat is noise
                prepared = await engine.prepare(KEY, user)
                await engine.record(prepared, await engine.call(prepared), shown=("x",))
                await folds.drain()
        info = [e for e in logs if e["event"] == "fold_dropped_facts"]
        assert info
        assert all(e["log_level"] == "info" and e["kinds"] == ["id"] for e in info)
        assert not [e for e in info if "PED-" in str(e)]
        debug = [e for e in logs if e["event"] == "fold_dropped_values"]
        assert debug
        assert all(e["log_level"] == "debug" for e in debug)
