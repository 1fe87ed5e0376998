"""Long cases for `bench.recall`: details said early, asked about late, in three phrasings.

Each `Detail` is planted in one early exchange (the user says it, the assistant notes it)
and holds `answer`, the exact words that must reach the request. Its questions come in
three phrasings: `direct` (the detail's own words), `rephrased` (some words shared, other
inflections), and `paraphrase` (what it is about, sharing few or no words with it). The
filler is a plausible long support case: varied, full of the case's routine words, with
no answer in it. Deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Detail:
    said: str
    answer: str
    direct: str
    rephrased: str
    paraphrase: str


ES = (
    Detail("Cambié los NS del dominio a ns1.hostnube.net el 14 de febrero.", "14 de febrero",
           "¿Qué día cambié los NS del dominio?", "¿Cuándo hice el cambio de NS?",
           "¿En qué fecha migré el dominio de proveedor?"),
    Detail("La IP fija de la oficina es 83.44.120.7.", "83.44.120.7",
           "¿Cuál es la IP fija de la oficina?", "Recuérdame la dirección IP de la oficina",
           "¿Qué dirección tiene nuestra conexión del despacho?"),
    Detail("El técnico que vino se llamaba Ramiro Quesada.", "Ramiro Quesada",
           "¿Cómo se llamaba el técnico que vino?", "¿Quién era el técnico de la visita?",
           "¿Qué persona nos mandasteis a revisar la instalación?"),
    Detail("Me cobraron 189,40 € de más en la factura de enero.", "189,40 €",
           "¿Cuánto me cobraron de más en la factura de enero?",
           "¿Qué importe de más me cobrasteis en enero?", "¿De cuánto era el error del recibo?"),
    Detail("Mi número de cliente es CL-558812.", "CL-558812",
           "¿Cuál es mi número de cliente?", "Dime mi número de cliente, no lo encuentro",
           "¿Con qué código estoy registrado con vosotros?"),
    Detail("El servidor de correo antiguo estaba en mail.talleres-ortiz.es.",
           "mail.talleres-ortiz.es", "¿Dónde estaba el servidor de correo antiguo?",
           "¿Cuál era el servidor antiguo del correo?",
           "¿Qué máquina usábamos antes para los emails?"),
    Detail("El router está en el armario del sótano, detrás de la caldera.",
           "detrás de la caldera",
           "¿Dónde está el router del sótano?", "¿En qué armario dejamos el router?",
           "¿Dónde tenemos instalado el aparato de internet?"),
    Detail("La contraseña del wifi de invitados la cambiamos a Girasol-2291.", "Girasol-2291",
           "¿Cuál es la contraseña del wifi de invitados?", "¿A qué cambiamos la clave del wifi?",
           "¿Cómo entran las visitas a la red?"),
)  # fmt: skip

EN = (
    Detail("I migrated the DNS to Cloudflare on March 3rd.", "March 3rd",
           "When did I migrate the DNS to Cloudflare?", "What day was the DNS migration?",
           "When did we move the domain to the new provider?"),
    Detail("Our static IP at the warehouse is 91.200.14.66.", "91.200.14.66",
           "What is the static IP at the warehouse?", "Remind me of the warehouse IP address",
           "Which address does the storage building connect from?"),
    Detail("The engineer who came over was called Priya Natarajan.", "Priya Natarajan",
           "What was the engineer who came over called?", "Who was the engineer on the visit?",
           "Which person did you send to look at the installation?"),
    Detail("You charged me $212.75 twice on the April invoice.", "$212.75",
           "How much did you charge me twice on the April invoice?",
           "What was the double charge in April?", "How big was the billing mistake?"),
    Detail("My account number is AC-770312.", "AC-770312",
           "What is my account number?", "Tell me my account number again",
           "Under which code am I registered with you?"),
    Detail("The old backup server was backup01.harborlogistics.com.",
           "backup01.harborlogistics.com", "Which was the old backup server?",
           "What was the name of the former backup server?",
           "Where did our copies use to be stored?"),
    Detail("The switch sits in the server closet next to the fire exit.", "next to the fire exit",
           "Where does the switch sit in the server closet?", "In which closet is the switch?",
           "Where is the network hardware physically located?"),
    Detail("We set the guest wifi password to Sunflower-8830.", "Sunflower-8830",
           "What is the guest wifi password?", "What did we set the guest password to?",
           "How do visitors get onto the network?"),
)  # fmt: skip

_FILLER = {
    "es": (
        ("Sigue sin llegar el correo de {who} a la bandeja de entrada.",
         "Lo reviso: puede ser el filtro antispam. ¿Puedes probar a enviarte uno de prueba?"),
        ("El panel tarda mucho en cargar {when}.", "Estamos viendo lentitud puntual; lo miro."),
        ("He reiniciado el equipo de {who} y nada.", "Gracias por probarlo. Vamos con otra cosa."),
        ("¿Puedes revisar los registros del buzón de {who}?",
         "Claro, dame unos minutos para revisar los registros."),
        ("Ya he borrado la caché del navegador {when}.", "Perfecto, así descartamos eso."),
        ("Me sale un aviso de certificado al entrar en la web {when}.",
         "Ese aviso suele ser del navegador; ¿me mandas una captura?"),
        ("Probé desde el móvil con datos y tampoco va.", "Entonces no es la red local."),
        ("{who} tiene el mismo problema desde {when}.",
         "Lo anoto para revisar su cuenta también."),
        ("¿Hay alguna incidencia general abierta?", "Ahora mismo no hay incidencias generales."),
        ("Vale, espero tu respuesta.", "De acuerdo, te escribo en cuanto sepa algo."),
    ),
    "en": (
        ("Mail from {who} still isn't reaching the inbox.",
         "Let me check: it may be the spam filter. Can you send yourself a test?"),
        ("The dashboard is very slow to load {when}.", "We're seeing some slowness; looking."),
        ("I restarted {who}'s computer and nothing changed.", "Thanks for trying that."),
        ("Can you check the mailbox logs for {who}?", "Sure, give me a few minutes."),
        ("I already cleared the browser cache {when}.", "Great, that rules it out."),
        ("I get a certificate warning on the website {when}.",
         "That warning usually comes from the browser; can you send a screenshot?"),
        ("I tried from my phone on mobile data and it fails too.", "Then it isn't the LAN."),
        ("{who} has had the same problem since {when}.", "Noted, I'll check that account too."),
        ("Is there any general outage open?", "There is no general outage right now."),
        ("Ok, I'll wait for your answer.", "Fine, I'll write as soon as I know more."),
    ),
}  # fmt: skip
_WHO = {"es": ("ventas", "contabilidad", "Marta", "almacén", "dirección", "Luis"),
        "en": ("sales", "accounting", "Maria", "the warehouse", "management", "Tom")}  # fmt: skip
_WHEN = {
    "es": ("esta mañana", "desde ayer", "a mediodía", "por la tarde", "el lunes"),
    "en": ("this morning", "since yesterday", "at noon", "this afternoon", "on Monday"),
}


@dataclass(frozen=True, slots=True)
class Line:
    role: str
    content: str
    probe: bool = False
    detail: Detail | None = None
    phrasing: str = ""


def case(language: str, exchanges: int, seed: int = 7) -> list[Line]:
    """One long case: the details among the first exchanges, then filler to `exchanges`,
    then every question about every detail as probes (after the last exchange)."""
    rng = random.Random(seed)
    details = ES if language == "es" else EN
    noted = "Anotado, gracias." if language == "es" else "Noted, thanks."
    lines: list[Line] = []
    planted = iter(details)
    for n in range(exchanges):
        detail = next(planted, None) if n % 2 == 1 else None
        if detail is not None:
            lines += [Line("user", detail.said), Line("assistant", f"{noted} {detail.said}")]
            continue
        user, reply = rng.choice(_FILLER[language])
        fill = {"who": rng.choice(_WHO[language]), "when": rng.choice(_WHEN[language])}
        lines += [Line("user", user.format(**fill)), Line("assistant", reply.format(**fill))]
    for detail in details:
        for phrasing in ("direct", "rephrased", "paraphrase"):
            question = getattr(detail, phrasing)
            lines.append(Line("user", question, True, detail, phrasing))
    return lines
