"""A long, deterministic Spanish support conversation for the benchmarks.

    python -m bench.data.transcripts [--turns N] [--replies llm|terse] [--out FILE.jsonl]

One customer, one continuous case (no real change of topic), so every early fact is
still relevant at the end: an order, its date and amount, a ticket, a phone number, an
email, an address, a tracking code, all given in the first turns; then weeks of
troubleshooting, a courier pickup, a repair, a partial refund and follow-ups that keep
mentioning some of those identifiers. Replies are scripted, so no model is needed.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

SESSION = "soporte-largo"

# The facts the customer and the agent give in the opening turns; each must survive.
EARLY_FACTS = (
    "#PED-48213",
    "3 de marzo",
    "1.250,50 €",
    "INC-77120",
    "+34 612 345 678",
    "lucia.moreno@example.com",
    "TRK-5590217",
    "28028",
)

_OPENING = (
    (
        "Hola, buenas. Os escribo por el pedido #PED-48213 que hice el 3 de marzo.",
        "Buenos días, soy Marta, de soporte de TecnoHogar. Veo el pedido #PED-48213 del "
        "3 de marzo. ¿En qué puedo ayudarte?",
    ),
    (
        "Es un portátil Orion 15 con su base de conexión. Pagué 1.250,50 € con tarjeta.",
        "Correcto: portátil Orion 15 y base Dock Pro, total 1.250,50 €, pagado con la "
        "tarjeta terminada en 4417.",
    ),
    (
        "La pantalla parpadea desde el primer día, sobre todo con poco brillo.",
        "Entiendo. Abro la incidencia INC-77120 para el parpadeo de la pantalla y la "
        "vinculo al pedido #PED-48213.",
    ),
    (
        "Mi teléfono es el +34 612 345 678, por si el técnico tiene que llamarme.",
        "Apuntado el +34 612 345 678 como teléfono de contacto en la incidencia INC-77120.",
    ),
    (
        "Y el correo para todo lo de la incidencia es lucia.moreno@example.com.",
        "Perfecto, las notificaciones de la INC-77120 irán a lucia.moreno@example.com.",
    ),
    (
        "La dirección es calle Alcalá 214, 3.º B, 28028 Madrid.",
        "Guardada la dirección: calle Alcalá 214, 3.º B, 28028 Madrid.",
    ),
    (
        "El paquete vino con el seguimiento TRK-5590217, lo digo por si hace falta.",
        "Gracias, el envío TRK-5590217 consta entregado. Lo añado a la incidencia.",
    ),
)

_SETTINGS = ("brillo", "frecuencia de refresco", "modo de ahorro", "perfil de color")
_VALUES = ("al 30 %", "al 50 %", "al 80 %", "en 60 Hz", "en 120 Hz", "desactivado")
_APPS = ("el navegador", "una videollamada", "el editor de fotos", "una película", "Excel")
_TIMES = ("por la mañana", "después de comer", "por la tarde", "por la noche")
_FEELINGS = ("Vale", "De acuerdo", "Entendido", "Muy bien", "Perfecto", "Ok")


@dataclass(frozen=True, slots=True)
class Turn:
    user: str
    reply: str
    ts: datetime


def _troubleshooting(rng: random.Random, n: int) -> tuple[str, str]:
    setting, value = rng.choice(_SETTINGS), rng.choice(_VALUES)
    app, when = rng.choice(_APPS), rng.choice(_TIMES)
    flickers = rng.random() < 0.6
    result = "sigue parpadeando" if flickers else "parece que va mejor"
    user = (
        f"{rng.choice(_FEELINGS)}, he probado a poner el {setting} {value} con {app} "
        f"abierto {when} y {result}."
    )
    reply = f"Anoto la prueba {n}: {setting} {value} con {app}, resultado: {result}. " + (
        "Probemos ahora a actualizar el controlador gráfico a la versión 31.0.101."
        if flickers
        else "Déjalo así un par de días y me cuentas si vuelve a pasar."
    )
    return user, reply


def _followup(rng: random.Random, n: int, day: datetime) -> tuple[str, str]:
    date = f"{day.day} de {_MONTHS[day.month - 1]}"
    options = (
        (
            f"Hola otra vez. Hoy {date} ha vuelto a parpadear unos {rng.randint(2, 40)} segundos.",
            f"Gracias por avisar. Registro el episodio del {date} en la INC-77120 "
            f"(seguimiento {n}).",
        ),
        (
            f"¿Hay novedades de la incidencia? Ya van {n} mensajes con esto.",
            f"La INC-77120 sigue abierta con prioridad media; el técnico revisa los registros "
            f"del {date}.",
        ),
        (
            f"Os mando una foto del parpadeo al correo, la número {n}.",
            f"Recibida la foto {n} en el buzón de la incidencia. Se ve la franja horizontal.",
        ),
        (
            f"El ventilador también suena raro desde el {date}, ¿puede estar relacionado?",
            f"Puede ser por temperatura. Anoto el ruido del ventilador ({date}) junto al "
            "parpadeo.",
        ),
        (
            f"¿Me podéis confirmar que la garantía cubre esto? Estamos a {date}.",
            "Sí: la garantía de 24 meses cubre la pantalla y la base; el pedido #PED-48213 "
            "está dentro de plazo.",
        ),
    )
    return rng.choice(options)


_MONTHS = (
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
)


def _repair(rng: random.Random, n: int, day: datetime) -> tuple[str, str]:
    date = f"{day.day} de {_MONTHS[day.month - 1]}"
    hour = f"{rng.randint(9, 18)}:{rng.choice(('00', '15', '30', '45'))}"
    options = (
        (
            f"¿El mensajero puede venir el {date} a las {hour}?",
            f"Reservo la recogida del {date} a las {hour} en calle Alcalá 214. Te llegará un "
            f"SMS (aviso {n}).",
        ),
        (
            f"He empaquetado el portátil; ¿meto también la base Dock Pro? (pregunta {n})",
            "Solo el portátil y el cargador; la base no hace falta para la reparación.",
        ),
        (
            f"¿En qué estado está la reparación? Hoy es {date}.",
            f"El taller ha recibido el equipo; diagnóstico previsto antes del {date} por la "
            f"tarde (consulta {n}).",
        ),
        (
            "¿Me podéis dejar un portátil de préstamo mientras tanto?",
            f"Solicito un equipo de préstamo; se envía en 48 horas (petición {n}).",
        ),
    )
    return rng.choice(options)


def _refund(rng: random.Random, n: int) -> tuple[str, str]:
    amount = rng.choice(("25,00 €", "40,00 €", "62,50 €", "75,00 €"))
    options = (
        (
            f"Por las molestias, ¿podríais compensarme con {amount}? (mensaje {n})",
            f"Traslado la petición de compensación de {amount} a facturación; te respondemos "
            "por correo.",
        ),
        (
            f"¿Cuándo veré el abono en la tarjeta 4417? Llevo {n} días esperando.",
            "El abono tarda de 5 a 7 días hábiles desde que facturación lo aprueba.",
        ),
        (
            "¿La factura corregida me la mandáis al mismo correo?",
            f"Sí, al correo de la incidencia. La referencia será FAC-2025-{3100 + n}.",
        ),
    )
    return rng.choice(options)


# What an LLM support agent adds around the substance of a reply: explanations, next steps,
# reassurance. No hard facts, so fact retention is measured on the same facts either way.
_ELABORATION = (
    "Te explico por qué lo hacemos así: queremos descartar primero lo más sencillo antes de "
    "mover el equipo, porque cada envío al taller suma días de espera.",
    "Si en algún momento notas algo distinto, aunque parezca menor, cuéntamelo y lo anoto en "
    "el historial para que el técnico lo tenga delante.",
    "Mientras tanto puedes seguir usando el portátil con normalidad; no hay riesgo de perder "
    "datos por este fallo.",
    "Sé que es un proceso pesado y te agradezco la paciencia; lo estamos siguiendo de cerca.",
    "Cuando tengas un momento, prueba a reproducirlo en las mismas condiciones que la última "
    "vez, así podremos comparar los resultados con precisión.",
    "Te recomiendo guardar una copia de tus documentos en la nube o en un disco externo antes "
    "de cualquier intervención, por si acaso.",
    "El equipo técnico revisa estas incidencias por orden de llegada, y la tuya ya está "
    "marcada para que no se pierda entre las demás.",
    "Si prefieres que te llamemos en lugar de seguir por escrito, dímelo y lo organizamos a la "
    "hora que mejor te venga.",
    "Es un síntoma que hemos visto en otros equipos de la misma serie y normalmente se "
    "resuelve, así que no te preocupes.",
    "Para cualquier duda sobre la garantía, recuerda que cubre tanto las piezas como la mano "
    "de obra durante todo el periodo vigente.",
    "Anoto también tus comentarios sobre cómo está funcionando el resto del equipo, porque "
    "ayudan a descartar causas.",
    "Si la situación empeora de repente, no esperes a que te escribamos: contéstame aquí "
    "mismo y lo priorizo.",
    "Entiendo que es frustrante que un equipo nuevo dé problemas, y por eso queremos dejarlo "
    "resuelto del todo y no con un apaño.",
    "Si te resulta más cómodo, respóndeme cuando quieras: el caso se queda abierto y no hace "
    "falta que vuelvas a explicarlo desde el principio.",
    "Ten a mano el cargador original cuando hagas las pruebas, porque algunos cargadores "
    "genéricos provocan comportamientos extraños en la pantalla.",
    "Por nuestra parte revisaremos también si el fabricante ha publicado alguna actualización "
    "que afecte a este modelo.",
    "No hace falta que reinstales nada por tu cuenta; con los pasos que te voy indicando es "
    "suficiente.",
    "Cualquier detalle que recuerdes sobre cuándo empezó o qué estabas haciendo en ese momento "
    "nos ayuda a acotar la causa.",
    "Gracias por explicarlo con tanto detalle, así es mucho más fácil seguir el caso.",
    "Te iré informando de cada paso por este mismo canal para que no tengas que estar "
    "pendiente de otros sitios.",
)
# Explanation sentences an LLM-length reply adds to its substance: 60-150 words in all.
_ELABORATION_SENTENCES = (3, 4)


def long_support(turns: int = 320, seed: int = 48213, *, replies: str = "llm") -> list[Turn]:
    """`turns` user turns (at least the opening), deterministic for a given seed.

    `replies="llm"` (what a support assistant backed by an LLM writes: 60-150 words) adds
    three or four sentences of explanation, reassurance and next steps around each reply's
    substance (no hard facts among them, so fact retention is measured on the same facts);
    `"terse"` keeps each reply to its substance (~18 words), the hardest case for memory
    savings: the summary's fixed cost weighs most against a cheap history."""
    out = _long_support(turns, seed)
    if replies == "terse":
        return out
    if replies != "llm":
        raise ValueError(f"replies must be 'llm' or 'terse', not {replies!r}")
    rng = random.Random(seed + 1)
    low, high = _ELABORATION_SENTENCES
    return [
        Turn(t.user, " ".join([t.reply, *rng.sample(_ELABORATION, rng.randint(low, high))]), t.ts)
        for t in out
    ]


def _long_support(turns: int, seed: int) -> list[Turn]:
    rng = random.Random(seed)
    at = datetime(2025, 3, 11, 9, 12, tzinfo=UTC)
    out: list[Turn] = []
    for user, reply in _OPENING[:turns]:
        at += timedelta(minutes=rng.randint(1, 5))
        out.append(Turn(user, reply, at))
    n = 0
    while len(out) < turns:
        n += 1
        if rng.random() < 0.12:  # a new day
            at = (at + timedelta(days=1)).replace(hour=rng.randint(9, 19))
        at += timedelta(minutes=rng.randint(1, 9))
        phase = len(out) * 4 // turns  # troubleshooting, follow-ups, repair, refund
        if phase == 0:
            user, reply = _troubleshooting(rng, n)
        elif phase == 1:
            user, reply = _followup(rng, n, at)
        elif phase == 2:
            user, reply = _repair(rng, n, at)
        else:
            user, reply = _refund(rng, n) if rng.random() < 0.6 else _followup(rng, n, at)
        out.append(Turn(user, reply, at))
    return out


def as_jsonl(turns: list[Turn], session: str = SESSION) -> str:
    """The transcript in the replay format (DESIGN.md), one user and one assistant line."""
    lines = []
    for turn in turns:
        for role, text in (("user", turn.user), ("assistant", turn.reply)):
            line = {"role": role, "content": text, "ts": turn.ts.isoformat(), "session": session}
            lines.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the long Spanish support transcript.")
    parser.add_argument("--turns", type=int, default=320)
    parser.add_argument("--replies", choices=("llm", "terse"), default="llm")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    text = as_jsonl(long_support(args.turns, replies=args.replies))
    if args.out is None:
        print(text, end="")
    else:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
