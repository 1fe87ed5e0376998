"""Cue phrases and intent families for topic detection, Spanish and English.

Written folded (lower-case, no accents, no apostrophes, punctuation as spaces), the form
`topic_text.phrase_hits` compares against. Lists favour precision: a phrase belongs here
only when it rarely means anything else in a support or sales chat.
"""

from __future__ import annotations

from types import MappingProxyType


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# The previous case is over: solved, sold, paid, or the user said goodbye.
CLOSURE = (
    # es
    "solucionado",
    "resuelto",
    "ya funciona",
    "ya anda",
    "ya quedo",
    "ya esta funcionando",
    "funciona perfecto",
    "todo funciona",
    "todo bien ahora",
    "eso es todo",
    "eso seria todo",
    "nada mas por ahora",
    "gracias por todo",
    "hasta luego",
    "adios",
    "chau",
    "nos vemos",
    "pedido confirmado",
    "compra confirmada",
    "pago recibido",
    "pago confirmado",
    "caso cerrado",
    "ticket cerrado",
    "cierro el ticket",
    # en
    "resolved",
    "solved",
    "that fixed it",
    "fixed it",
    "it works now",
    "works now",
    "working now",
    "all good now",
    "all set",
    "thats all",
    "that is all",
    "thats everything",
    "thanks bye",
    "goodbye",
    "bye",
    "have a nice day",
    "order confirmed",
    "purchase confirmed",
    "payment received",
    "payment confirmed",
    "case closed",
    "ticket closed",
    "closing the ticket",
)

# The user opens a new request on purpose.
NEW_REQUEST = (
    # es
    "otra cosa",
    "otra pregunta",
    "otra consulta",
    "otro tema",
    "otro asunto",
    "cambiando de tema",
    "cambio de tema",
    "aparte de eso",
    "tambien queria",
    "tambien quisiera",
    "una consulta distinta",
    "algo distinto",
    "algo diferente",
    "nueva consulta",
    "nuevo problema",
    "por cierto",
    # en
    "by the way",
    "btw",
    "a different question",
    "another question",
    "another thing",
    "something else",
    "something different",
    "unrelated",
    "different topic",
    "change of subject",
    "changing the subject",
    "on another note",
    "new issue",
    "new question",
    "separate issue",
    "different issue",
    "i also wanted",
    "anyway",
    "anyways",
)

# The message carries on with what is already on the table.
CONTINUATION = (
    # es
    "sigue",
    "siguen",
    "todavia",
    "otra vez",
    "de nuevo",
    "nuevamente",
    "lo mismo",
    "el mismo",
    "la misma",
    "ya probe",
    "probe",
    "volvi a",
    "como dijiste",
    "lo que me dijiste",
    "no funciona",
    "no anda",
    "sin cambios",
    # en
    "still",
    "again",
    "same error",
    "same issue",
    "same problem",
    "same thing",
    "as before",
    "tried",
    "retried",
    "didnt work",
    "doesnt work",
    "not working",
    "no change",
    "like you said",
    "as you said",
    "you suggested",
)

# Intent families. A word ending in `*` is a prefix; other words match whole (a plural
# `s`/`es` allowed); entries with a space are phrases.
INTENT_FAMILIES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "technical": (
            *_split(
                """
                error* falla* fallo* fail* bug* crash* cuelg* instal* configur* servidor* server*
                dns subdomin* nxdomain ssl certific* conexion* connect* wifi internet router*
                reinici* restart* reboot* log logs timeout* firmware driver* actualiz* updat*
                upgrad* navegador* browser* cache deploy* pantalla* screen* contrasena* password*
                login* api app apps aplicacion* build* compil* database* backup* respaldo*
                latenc* lento slow exception* traceback* puerto* dominio* domain* propag* 404 500
                502 503 http* https* url* email* correo* sincroniz* sync* bloque* blocked
                """
            ),
            "codigo de error",
            "error code",
            "registro a",
            "base de datos",
            "se cae",
            "se cuelga",
        ),
        "billing": (
            *_split(
                """
                factur* invoice* cobr* charg* cargo cargos pago pagos pague pagu* payment* paid
                tarjeta* card cards reembols* refund* suscrip* subscript* billing recibo* receipt*
                debit* transferencia* iva vat impuesto* tax taxes importe* monto* amount* saldo*
                balance renovacion* renewal* duplicad* duplicate* credit*
                """
            ),
            "cuenta bancaria",
            "bank account",
            "cobro duplicado",
            "double charge",
        ),
        "purchase": _split(
            """
            compr* buy buying purchas* precio* price* pricing cotiza* quote* presupuest*
            financ* cuotas installment* descuent* discount* oferta* offer* promo* catalog*
            stock disponib* availab* reserv* envio* shipping entrega* delivery modelo* plan
            planes contratar* cotizacion*
            """
        ),
        "complaint": (
            *_split(
                """
                reclam* queja* quej* complain* complaint* garantia* warrant* defect* defectu*
                roto rota rotos broken danad* damag* devolu* return* insatisf* unsatisf* pesim*
                terrible estafa* scam* indemniz* compensat* inaceptable unacceptable
                """
            ),
            "mal estado",
            "no llego",
            "never arrived",
            "mal servicio",
            "bad service",
        ),
    }
)

# Words that point back at something already said ("does it still...", "¿eso cuánto tarda?").
BACK_REFERENCES = frozenset(
    _split(
        """
    it its that this these those they them their he him his she her there
    eso esto esa ese esos esas aquello ahi alli ello
    """
    )
)

# A closing phrase next to one of these is not a closure ("works now, but the big file fails").
CONTRAST = ("but", "however", "except", "only for", "pero", "sin embargo", "excepto", "salvo")
