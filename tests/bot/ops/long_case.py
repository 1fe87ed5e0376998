"""A long single support case (Spanish) with planted facts and false resets: an
overnight silence and a goodbye in the middle of the case, each followed by a message
that goes on with it. For the soft-reset replay tests and `docs/architecture.md`'s
figure (`python -m tests.bot.ops.long_case OUT.jsonl` writes it)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

PLANTED = (
    "Laura Méndez", "12345678Z", "#48213", "203.0.113.45", "2001:db8::1",
    "ns1.hostingbueno.es", "ES91 2100 0418 4502 0005 1332", "129,90 €", "3 de marzo",
    "RR123456789ES", "laura.mendez@example.com", "PED-7731", "15/04/2026",
)  # fmt: skip
DAY_ONE = [
    (
        "Hola, soy Laura Méndez y mi DNI es 12345678Z. Mi web no carga desde ayer.",
        "Hola Laura, lo revisamos. ¿Desde cuándo exactamente?",
    ),
    (
        "Desde el 3 de marzo por la tarde. Tengo abierto el ticket #48213.",
        "Gracias, veo el ticket. ¿Qué error te sale al abrirla?",
    ),
    ("Sale un error de DNS en el navegador.", "Vamos a mirar la zona DNS."),
    (
        "La IP del servidor es 203.0.113.45 y la IPv6 2001:db8::1.",
        "Anotado. ¿Y a qué servidores de nombres apunta el dominio?",
    ),
    ("Los DNS apuntan a ns1.hostingbueno.es.", "Ese servidor de nombres no responde ahora."),
    ("¿Y eso lo arregláis vosotros?", "Sí, lo escalamos al equipo de sistemas."),
    ("Vale. Además me cobrasteis 129,90 € dos veces.", "Lo siento, reviso el cobro."),
    (
        "Mi IBAN es ES91 2100 0418 4502 0005 1332 para la devolución.",
        "Gracias, queda anotado para el reembolso.",
    ),
    ("Mi correo es laura.mendez@example.com por si me escribís.", "Perfecto."),
    ("También pedí un router nuevo, el pedido PED-7731.", "Veo el pedido en preparación."),
    ("El seguimiento del router es RR123456789ES.", "Gracias, el envío está en tránsito."),
    ("Me dijeron que llegaría el 15/04/2026.", "Esa es la fecha prevista, sí."),
    ("He borrado la caché del navegador y nada.", "Normal: el fallo está en los DNS."),
    ("¿Cuánto tardará sistemas?", "Suele ser menos de 24 horas. ¿Puedes probar mañana?"),
]
DAY_TWO = [
    (
        "Buenos días, aquí sigo con lo mismo. Un momento, que lo compruebo.",
        "Buenos días, claro, aquí estoy.",
    ),
    (
        "Ya está: la web de ns1.hostingbueno.es sigue sin responder desde la IP 203.0.113.45.",
        "Lo reclamo otra vez a sistemas con el ticket #48213.",
    ),
    ("Vale, gracias. ¿Y lo del cobro doble?", "El reembolso está aprobado."),
    ("Gracias, creo que eso es todo por ahora.", "¡A ti! Aquí estamos."),
    (
        "Perdona, una cosa más: ¿el reembolso de los 129,90 € va al IBAN que te di?",
        "Sí, al IBAN de la devolución.",
    ),
    ("¿Y el router sigue en tránsito?", "Sí, sigue en camino según el seguimiento."),
]
LAST = "Para terminar: ¿me recuerdas todos los datos del caso?"


def lines() -> list[dict[str, object]]:
    """The transcript's lines: day one from 09:00, day two the next morning."""
    out: list[dict[str, object]] = []
    starts = (datetime(2026, 3, 4, 9, 0, tzinfo=UTC), datetime(2026, 3, 5, 9, 30, tzinfo=UTC))
    for start, day in zip(starts, (DAY_ONE, DAY_TWO), strict=True):
        for n, (user, reply) in enumerate(day):
            ts = (start + timedelta(minutes=3 * n)).isoformat()
            out += [{"role": "user", "content": user, "ts": ts},
                    {"role": "assistant", "content": reply}]  # fmt: skip
    end = (starts[1] + timedelta(minutes=3 * len(DAY_TWO))).isoformat()
    return [
        *out,
        {"role": "user", "content": LAST, "ts": end},
        {"role": "assistant", "content": "ok"},
    ]


def write(path: Path) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines()), "utf-8")
    return path


if __name__ == "__main__":
    write(Path(sys.argv[1]))
