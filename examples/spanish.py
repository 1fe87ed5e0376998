"""The Spanish example: Lucía's laptop case, then a billing case (see make_examples.py)."""

from __future__ import annotations

from typing import Protocol


class Chat(Protocol):
    turns: int

    def say(self, user: str, bot: str) -> None: ...
    def later(self, days: int, hour: int) -> None: ...
    def pick(self, options: list[str]) -> str: ...


OK = ["Vale.", "De acuerdo.", "Perfecto.", "Entendido.", "Vale, gracias.", "Genial."]
NEXT = ["¿Y ahora qué hago?", "¿Qué pruebo ahora?", "¿Siguiente paso?", "Vale, ¿y después?",
        "Hecho lo anterior. ¿Qué más?", "¿Qué otra cosa puedo probar?"]  # fmt: skip

# (instruction, what Lucía reports, what the agent concludes)
STEPS = [
    (
        "actualiza el controlador gráfico desde Ajustes > Windows Update > Opciones avanzadas",
        "Actualizado a la versión 31.0.101.4502. Sigue parpadeando con el brillo bajo.",
        "Anoto: controlador 31.0.101.4502 instalado, el parpadeo persiste.",
    ),
    (
        "desactiva el ahorro de energía de la pantalla (Intel Display Power Saving Technology)",
        "Lo he desactivado. Parece que parpadea algo menos, pero sigue.",
        "Mejora parcial al desactivar el ahorro de energía; no lo resuelve.",
    ),
    (
        "pulsa F2 al arrancar y dime qué versión de BIOS aparece",
        "Pone BIOS 1.07, fecha 12/11/2024.",
        "BIOS 1.07. La última publicada es la 1.12 del 20/02/2025: conviene actualizarla.",
    ),
    (
        "instala la BIOS 1.12 con el cargador conectado y sin apagar el equipo",
        "Hecho, ya tengo la 1.12. Tardó unos 6 minutos. El parpadeo sigue igual.",
        "BIOS actualizada a 1.12 sin cambios en el parpadeo.",
    ),
    (
        "cambia la frecuencia de refresco de 144 Hz a 60 Hz en Configuración de pantalla",
        "A 60 Hz parpadea igual, quizá un poco más lento.",
        "La frecuencia de refresco no influye: descartamos un problema de configuración.",
    ),
    (
        "conecta un monitor externo por HDMI y mira si también parpadea",
        "En el monitor externo se ve perfecto, ni un parpadeo en 20 minutos.",
        "El monitor externo funciona bien: la gráfica está bien, el fallo está en el panel o su "
        "cable.",
    ),
    (
        "arranca en modo seguro (Mayús + Reiniciar > Solucionar problemas)",
        "En modo seguro también parpadea, sobre todo al mover la tapa.",
        "Parpadea también en modo seguro y al mover la tapa: apunta a hardware (cable eDP o "
        "panel).",
    ),
    (
        "abre y cierra la tapa despacio entre 90 y 120 grados y observa la pantalla",
        "Entre 100 y 110 grados se pone casi negra un segundo. Muy raro.",
        "Fallo reproducible al mover la bisagra entre 100 y 110 grados. Es un síntoma típico del "
        "cable de pantalla.",
    ),
    (
        "haz una foto o un vídeo corto del parpadeo y envíalo a soporte@tecnohogar.example",
        "Enviado el vídeo desde lucia.fernandez@example.es, dura 25 segundos.",
        "Recibido el vídeo de 25 segundos; lo adjunto a la incidencia INC-77120.",
    ),
    (
        "comprueba si el parpadeo cambia con el cargador conectado o solo con batería",
        "Con batería parpadea más. Con el cargador también, pero menos.",
        "Más parpadeo con batería: coherente con el ahorro de energía, pero no es la causa única.",
    ),
    (
        "desinstala el controlador gráfico desde el Administrador de dispositivos y reinicia",
        "Reiniciado con el controlador básico de Microsoft. Sigue igual, y ahora va más lento.",
        "Con el controlador básico también falla: no es el software del controlador. Reinstálalo.",
    ),
    (
        "reinstala el controlador 31.0.101.4502 desde la web de soporte del Orion 15",
        "Reinstalado. Todo como antes: va fluido pero parpadea.",
        "Controlador 31.0.101.4502 reinstalado; el equipo vuelve a su estado anterior.",
    ),
    (
        "prueba con una cuenta de usuario nueva de Windows",
        "He creado el usuario «prueba». También parpadea.",
        "Con un usuario nuevo también parpadea: descartamos tu perfil de Windows.",
    ),
    (
        "ejecuta el diagnóstico integrado (F12 > Diagnostics) y dime el código de error",
        "Me da el código 2000-0511 en la prueba de pantalla LCD.",
        "Código 2000-0511: fallo en la prueba del panel LCD. Con esto justificamos la visita "
        "técnica.",
    ),
]

# (day offset, status line the agent reads from the repair centre)
REPAIR = [
    (0, "recogido por el mensajero en Calle Mayor 12, 3ºB, 28013 Madrid a las 11:20"),
    (1, "en tránsito hacia el centro técnico de Getafe"),
    (1, "recibido en el centro técnico; diagnóstico programado para el 26 de marzo"),
    (1, "diagnóstico confirmado: panel con defecto de fábrica y bisagra izquierda dañada"),
    (1, "decisión: sustitución por unidad nueva (no reparación), sin coste para el cliente"),
    (2, "unidad nueva SN-OR15-88421 preparada y probada durante 4 horas"),
    (1, "enviada con seguimiento 5530 2298 7741; entrega prevista el 2 de abril"),
    (1, "en reparto; franja estimada de 9:00 a 13:00"),
]

# (question about a line of invoice FAC-2025-03117, answer)
INVOICE = [
    (
        "¿Qué es la línea «Orion 15 — 1.149,00 €»?",
        "Es el portátil Orion 15 a su precio de venta, 1.149,00 € con IVA incluido.",
    ),
    (
        "¿Y «Dock Pro USB-C — 101,50 €»?",
        "Es la base de conexión Dock Pro; 101,50 € con IVA, tal como en el pedido #PED-48213.",
    ),
    (
        "¿Y esa línea de «Garantía+ 2 años — 70,00 €»? Yo no la pedí.",
        "No consta que la aceptaras en el pedido: se añadió por error en la facturación. "
        "Procede su devolución de 70,00 €.",
    ),
    (
        "¿Por qué el total de la factura es 1.320,50 € y no 1.250,50 €?",
        "Porque incluye esos 70,00 € de Garantía+. Sin ella, el total correcto es 1.250,50 €.",
    ),
    (
        "¿El envío no se cobraba?",
        "No, el envío fue gratuito (0,00 €) por superar los 50 €; aparece a cero en la factura.",
    ),
    (
        "¿Cuánto IVA lleva en total?",
        "Sobre 1.250,50 € el IVA del 21 % es 217,03 € y la base imponible 1.033,47 €.",
    ),
]


def soporte_es(c: Chat) -> Chat:
    _opening(c)
    _troubleshooting(c)
    _technician(c)
    _rma(c)
    _billing(c)
    _company_invoice(c)
    _closing(c)
    _new_order(c)
    return c


def _opening(c: Chat) -> None:
    c.say(
        "Hola, buenos días. Os escribo por el pedido #PED-48213 que hice el 3 de marzo.",
        "Buenos días, soy Marta, de soporte de TecnoHogar. Veo el pedido #PED-48213 del 3 de "
        "marzo de 2025. ¿En qué puedo ayudarte?",
    )
    c.say(
        "Es un portátil Orion 15 con una base de conexión. Pagué 1.250,50 € con tarjeta.",
        "Correcto: portátil Orion 15 (1.149,00 €) y base Dock Pro USB-C (101,50 €), total "
        "1.250,50 €, pagado con la tarjeta terminada en 4417 el 3 de marzo.",
    )
    c.say(
        "Me dijisteis que llegaba el 7 de marzo y llegó el 10.",
        "Lo siento. La entrega prevista era el 7 de marzo y se entregó el 10 de marzo a las "
        "17:42. Dejo constancia del retraso de 3 días.",
    )
    c.say(
        "Bueno, lo grave no es eso: la pantalla parpadea desde el primer día.",
        "Vaya. ¿El parpadeo es continuo o aparece en algún momento concreto: con poco brillo, "
        "al mover la tapa, con el cargador conectado?",
    )
    c.say(
        "Sobre todo cuando bajo el brillo por debajo del 40 %, y a veces al abrir la tapa.",
        "Gracias, es un dato importante. ¿Me confirmas tu número de cliente y un correo de "
        "contacto para abrir la incidencia?",
    )
    c.say(
        "Mi número de cliente es CLI-220931 y el correo lucia.fernandez@example.es",
        "Gracias, Lucía. He abierto la incidencia INC-77120 para CLI-220931; te llegará un "
        "correo a lucia.fernandez@example.es con el número.",
    )
    c.say(
        "¿Me podéis llamar? Mi móvil es +34 612 345 678, mejor a partir de las 16:00.",
        "Anotado: +34 612 345 678, llamadas a partir de las 16:00. Mientras tanto podemos "
        "hacer algunas pruebas por aquí si te parece.",
    )
    c.say(
        "Sí, vamos con ello. Tengo el portátil delante.",
        "Perfecto. Antes de nada: ¿qué versión de Windows tienes? Lo ves en Configuración > "
        "Sistema > Información.",
    )
    c.say(
        "Por cierto, la caja llegó un poco golpeada por una esquina.",
        "Gracias por decirlo. ¿El portátil tiene algún golpe o marca visible?",
    )
    c.say(
        "No, el portátil está perfecto por fuera. Solo la caja.",
        "Me alegro. Lo anoto igualmente en INC-77120 por si tuviera relación.",
    )
    c.say(
        "¿Puede ser por el golpe lo de la pantalla?",
        "Es posible pero poco probable si no hay marcas. Las pruebas nos lo dirán.",
    )
    c.say(
        "Vale. ¿Y lo del retraso de la entrega, me devolvéis algo?",
        "El envío fue gratuito, así que no hay gastos que devolver; el retraso queda "
        "registrado por si necesitas reclamar más adelante.",
    )
    c.say("Bueno, lo importante es la pantalla.", "De acuerdo, nos centramos en la pantalla.")
    c.say(
        "Windows 11 Home, versión 23H2.",
        "Gracias. Con Windows 11 23H2 haremos unas pruebas ordenadas y voy anotando cada "
        "resultado en INC-77120.",
    )


def _troubleshooting(c: Chat) -> None:
    for number, (step, result, note) in enumerate(STEPS, start=1):
        ask = c.pick(NEXT) if number > 1 else "Dime qué hago primero."
        c.say(ask, f"Paso {number}: {step}. Cuando termines me cuentas qué ves.")
        c.say(result, note)
        if number in (3, 6, 8):
            c.later(days=0, hour=int(c.pick(["17", "18", "19"])))
            c.say(
                c.pick(
                    [
                        "Perdona, tuve que salir un momento. Sigo.",
                        "Ya estoy otra vez aquí.",
                        "Sigo con las pruebas.",
                    ]
                ),
                "Sin problema, seguimos donde lo dejamos.",
            )
    c.say(
        "Entonces, ¿qué conclusión sacáis?",
        "Con el código 2000-0511, el parpadeo en modo seguro y el fallo entre 100 y 110 grados "
        "de la tapa, es un fallo de hardware. Propongo una visita técnica a domicilio.",
    )
    c.say(
        "Vale, ¿cuándo podría venir el técnico?",
        "La primera franja libre es el martes 18 de marzo de 10:00 a 14:00. ¿Te viene bien?",
    )
    c.say(
        "Sí, el 18 por la mañana estoy en casa. Calle Mayor 12, 3ºB, 28013 Madrid.",
        "Confirmada la visita el 18 de marzo de 10:00 a 14:00 en Calle Mayor 12, 3ºB, 28013 "
        "Madrid. El técnico llamará al +34 612 345 678 media hora antes.",
    )
    c.say(
        "¿Tengo que preparar algo?",
        "Ten el portátil cargado, la contraseña a mano y una copia de seguridad de tus "
        "archivos por precaución.",
    )
    c.later(days=1, hour=16)
    for user, bot in [
        ("Me habéis llamado a las 16:30 pero no pude cogerlo.",
         "Sí, era Javier, del equipo técnico, para confirmar la visita del 18 de marzo. "
         "¿Quieres que te vuelva a llamar?"),
        ("No hace falta, la visita sigue en pie, ¿no?",
         "Sí: martes 18 de marzo de 10:00 a 14:00 en Calle Mayor 12, 3ºB, 28013 Madrid."),
        ("¿El técnico traerá las piezas?",
         "Sí, llevará un cable eDP y un panel de repuesto por si hiciera falta."),
        ("¿Y si tiene que llevárselo?",
         "Solo si no puede repararlo allí; en ese caso te daría un resguardo de recogida."),
    ]:  # fmt: skip
        c.say(user, bot)
    c.say(
        c.pick(OK) + " Hasta el martes.",
        "Hasta el martes, Lucía. Cualquier cosa, escribe aquí citando INC-77120.",
    )


def _technician(c: Chat) -> None:
    c.later(days=7, hour=13)
    c.say(
        "Hola de nuevo. Ha venido el técnico esta mañana.",
        "Hola, Lucía. Veo el parte de la visita del 18 de marzo en INC-77120. ¿Qué tal ha ido?",
    )
    c.say(
        "Ha cambiado el cable de la pantalla. Dice que era el cable eDP.",
        "Así consta: sustitución del cable eDP, pieza 5C10S30155. Prueba final correcta a las "
        "12:35.",
    )
    c.say(
        "De momento no parpadea. Voy a usarlo unos días y os digo.",
        "Perfecto. Dejo la incidencia en seguimiento 7 días; si vuelve a fallar, la reabrimos "
        "directamente.",
    )
    for day in ["miércoles", "jueves"]:
        c.later(days=1, hour=20)
        c.say(
            c.pick([f"Informe del {day}: todo bien hoy.", f"El {day} sin parpadeos, de momento."]),
            "Gracias por ir contándolo. Sigo con la incidencia en seguimiento.",
        )
    c.say(
        "¿Tengo que hacer algo para que no vuelva a pasar?",
        "No: evita solo forzar la tapa más allá de 135 grados mientras tanto.",
    )
    c.later(days=1, hour=10)
    c.say(
        "Pues ha vuelto a pasar. Esta mañana parpadeaba otra vez al abrir la tapa.",
        "Lo siento mucho. Reabro INC-77120. ¿Es igual que antes o ha cambiado algo?",
    )
    c.say(
        "Igual, pero ahora también hace un ruidito la bisagra izquierda.",
        "Anoto el ruido en la bisagra izquierda. Con dos intentos fallidos, corresponde "
        "enviarlo al centro técnico.",
    )
    c.say(
        "¿Y cuánto tiempo voy a estar sin portátil? Lo necesito para trabajar.",
        "El plazo habitual es de 7 a 10 días. Si el diagnóstico confirma defecto de fábrica, "
        "lo sustituimos por uno nuevo en lugar de repararlo.",
    )
    c.say(
        "Prefiero que me lo cambiéis directamente por uno nuevo.",
        "Lo entiendo. Lo he solicitado a mi responsable; necesita el diagnóstico del centro "
        "técnico para aprobar el cambio. Te aviso en cuanto conteste.",
    )
    c.later(days=0, hour=17)
    c.say(
        "¿Hay noticias de lo del cambio?",
        "Sí: mi responsable aprueba la RMA-5531. El centro técnico decidirá entre reparar o "
        "sustituir, con preferencia por sustituir si hay defecto de fábrica.",
    )


def _rma(c: Chat) -> None:
    for user, bot in [
        ("¿Me podéis dejar un portátil de sustitución mientras tanto?",
         "Tenemos un servicio de préstamo para clientes con RMA abierta: un equipo básico "
         "durante el tiempo de la reparación."),
        ("Sí, lo quiero. ¿Cómo lo pido?",
         "Ya lo he solicitado: préstamo PRE-2210, te lo lleva el mismo mensajero que recoge "
         "el tuyo."),
        ("¿Tiene algún coste?",
         "No, es gratuito; solo debes devolverlo cuando recibas tu equipo, con la etiqueta "
         "incluida."),
        ("¿Qué modelo es?", "Un Lumen 14 con Windows 11 y 8 GB de RAM; para ofimática va bien."),
        ("Me sirve, gracias.", "Perfecto, queda vinculado a la RMA-5531."),
    ]:  # fmt: skip
        c.say(user, bot)
    c.say(
        "¿Cómo os lo envío?",
        "Pasará a recogerlo un mensajero el lunes 24 de marzo entre 9:00 y 14:00. No hace "
        "falta la caja original; lleva su propio embalaje.",
    )
    c.say(
        "¿Tengo que mandar también la base Dock Pro?",
        "No, solo el portátil y el cargador. La base Dock Pro se queda contigo.",
    )
    c.say(
        "Vale. Borro mis datos antes, ¿no?",
        "Sí, haz copia de seguridad y, si quieres, restablece Windows. La RMA-5531 cubre "
        "igualmente el equipo.",
    )
    for days, status in REPAIR:
        c.later(days=days or 5, hour=int(c.pick(["9", "12", "16"])))
        question = c.pick(["¿Cómo va lo mío?", "¿Alguna novedad de la RMA-5531?",
                           "Hola, ¿sabéis algo del portátil?", "¿En qué estado está?",
                           "Buenas, pregunto por el envío."])  # fmt: skip
        c.say(question, f"Estado de la RMA-5531: {status}.")
        if "decisión" in status:
            c.say(
                "¡Bien! ¿Entonces me llega uno nuevo?",
                "Sí, un Orion 15 nuevo de la misma configuración. No tienes que pagar nada.",
            )
        if "seguimiento" in status:
            c.say(
                "¿Me pasas otra vez el número de seguimiento?",
                "Claro: 5530 2298 7741. Entrega prevista el 2 de abril.",
            )
    c.later(days=0, hour=14)
    c.say(
        "¡Ya lo tengo! Número de serie SN-OR15-88421.",
        "¡Genial! Coincide con la unidad enviada. Pruébalo con el brillo bajo y moviendo la "
        "tapa, como antes.",
    )
    c.say(
        "Brillo al 20 %, tapa arriba y abajo... nada, ni un parpadeo.",
        "Estupendo. ¿Y la bisagra? ¿Algún ruido?",
    )
    c.say(
        "Nada, suave y silenciosa.",
        "Perfecto. Cierro INC-77120 y la RMA-5531 como resueltas con sustitución por la "
        "unidad SN-OR15-88421.",
    )
    for user, bot in [
        ("¿Tengo que activar Windows otra vez?",
         "No, la licencia va en la placa y se activa sola al conectarte a internet."),
        ("Se ha activado solo, sí. ¿Y el Office?",
         "Inicia sesión con tu cuenta de Microsoft y se reinstalará tu licencia."),
        ("Hecho. ¿La BIOS viene ya actualizada?",
         "Sí, la unidad SN-OR15-88421 trae la BIOS 1.12 instalada."),
        ("¿Y qué hago con el portátil de préstamo?",
         "Mete el Lumen 14 en su caja con la etiqueta de PRE-2210 y el mensajero pasa el "
         "viernes 4 de abril."),
        ("¿A qué hora?", "Entre 9:00 y 14:00, igual que la recogida anterior."),
        ("Ya se lo han llevado.", "Confirmado: préstamo PRE-2210 devuelto el 4 de abril."),
    ]:  # fmt: skip
        c.say(user, bot)
    c.say(
        "Muchas gracias por todo, Marta. Al final ha salido bien.",
        "Gracias a ti por la paciencia, Lucía. Si necesitas algo más, aquí estoy.",
    )


def _billing(c: Chat) -> None:
    c.later(days=4, hour=11)
    c.say(
        "Hola, otra cosa distinta: me ha llegado la factura FAC-2025-03117 y no me cuadra.",
        "Hola, Lucía. Veo la factura FAC-2025-03117 del 3 de marzo. ¿Qué es lo que no te cuadra?",
    )
    c.say(
        "Me cobrasteis 1.320,50 € en la tarjeta, no 1.250,50 €. Hay 70 € de más.",
        "Tienes razón: el cargo en la tarjeta terminada en 4417 fue de 1.320,50 €. Revisemos "
        "la factura línea por línea.",
    )
    for question, answer in INVOICE:
        c.say(question, answer)
    c.say(
        "Entonces quiero que me devolváis los 70 €.",
        "Hecho: he solicitado la devolución de 70,00 € a la tarjeta terminada en 4417, "
        "referencia REM-90412. Tarda de 5 a 7 días hábiles.",
    )
    c.say(
        "¿Y si no aparece en una semana?",
        "Escríbeme con la referencia REM-90412; si en 7 días hábiles no ha llegado, lo "
        "reclamo al departamento financiero.",
    )
    c.say(
        "¿Me mandáis una factura corregida?",
        "Sí, emitiremos la factura rectificativa FAC-2025-03117-R por 1.250,50 €, que anula "
        "la anterior.",
    )
    c.say(
        "Por las molestias de todo esto, ¿no hay ninguna compensación?",
        "Puedo ofrecerte un cupón de 50,00 €: CUPON-ORION50, válido hasta el 30 de junio de "
        "2025 en cualquier compra superior a 100 €.",
    )
    c.say(
        "Bueno, algo es algo. ¿Se puede usar en la tienda física?",
        "Sí, en tienda y en la web. En tienda basta con enseñar el código CUPON-ORION50.",
    )
    c.later(days=3, hour=18)
    for question, answer in [
        ("Me ha llegado un correo del banco con un movimiento de 70,00 €. ¿Es la devolución?",
         "Sí, la devolución REM-90412 se procesó ayer; el banco la muestra hoy."),
        ("¿Y la factura rectificativa?",
         "Se emitió esta mañana: FAC-2025-03117-R, por 1.250,50 €. Te la he enviado a "
         "lucia.fernandez@example.es."),
        ("No me ha llegado. ¿Podéis revisar el correo?",
         "El envío figura a lucia.fernandez@example.es a las 09:14. Revisa la carpeta de spam; "
         "si no está, te la reenvío."),
        ("¿La devolución lleva algún concepto para reconocerla?",
         "Aparecerá como «TECNOHOGAR DEVOL REM-90412»."),
        ("¿Me cobrasteis comisiones por algo?",
         "No, ni en el cargo ni en la devolución; solo el importe de los productos."),
        ("Estaba en spam, ya la tengo.",
         "Perfecto. Márcanos como remitente seguro para la próxima."),
    ]:  # fmt: skip
        c.say(question, answer)


def _company_invoice(c: Chat) -> None:
    c.say(
        "Una cosa más: necesito la factura a nombre de mi empresa, no a mi nombre.",
        "Sin problema. Necesito la razón social, el CIF y la dirección fiscal.",
    )
    c.say(
        "Estudio Fernández SL, CIF B-87654321.",
        "Gracias. ¿Y la dirección fiscal de Estudio Fernández SL?",
    )
    c.say(
        "Calle de Alcalá 145, 4º izquierda, 28009 Madrid.",
        "Anotado: Estudio Fernández SL, B-87654321, Calle de Alcalá 145, 4º izquierda, 28009 "
        "Madrid.",
    )
    c.say(
        "¿Eso cambia la factura rectificativa?",
        "Sí: anularemos FAC-2025-03117-R y emitiremos FAC-2025-03117-R2 a nombre de Estudio "
        "Fernández SL por el mismo importe, 1.250,50 €.",
    )
    c.say("¿Cuánto tardáis?", "Entre 24 y 48 horas. Te llegará al mismo correo.")
    for ask, answer in [
        ("¿La base imponible sigue siendo la misma?",
         "Sí: base 1.033,47 €, IVA 21 % 217,03 €, total 1.250,50 €."),
        ("¿Podéis poner también mi número de pedido en la factura?",
         "Sí, incluiremos la referencia del pedido #PED-48213 en el concepto."),
        ("¿Y el número de serie del portátil nuevo?",
         "Podemos añadirlo como nota: unidad SN-OR15-88421 (sustitución por RMA-5531)."),
        ("Mejor que sí, para el inventario de la empresa.",
         "Hecho, lo añado como nota en FAC-2025-03117-R2."),
        ("¿La factura a la empresa afecta a la garantía?",
         "No, la garantía de 3 años es del equipo y sigue vigente desde el 10 de marzo de 2025."),
        ("¿Hasta cuándo tengo garantía exactamente?",
         "Hasta el 10 de marzo de 2028, tres años desde la entrega."),
    ]:  # fmt: skip
        c.say(ask, answer)
    c.say(
        "¿Y el pedido aparecerá en mi área de cliente como de la empresa?",
        "Sí, el pedido #PED-48213 se mostrará con los datos fiscales de Estudio Fernández SL.",
    )
    c.say(
        "¿Las próximas compras también irán a nombre de la empresa?",
        "Solo si lo eliges al pagar; tus datos personales siguen como predeterminados.",
    )
    c.later(days=2, hour=10)
    c.say(
        "Ya me ha llegado la FAC-2025-03117-R2. Todo correcto.",
        "Me alegro. Queda cerrado el tema de facturación.",
    )


def _closing(c: Chat) -> None:
    for ask, answer in [
        ("Por cierto, ¿la base Dock Pro se puede devolver si no la uso?",
         "El plazo de devolución son 30 días desde la entrega, así que venció el 9 de abril. "
         "Lo siento."),
        ("Vaya. ¿Y venderla de segunda mano anula algo?",
         "No, es tuya; venderla no afecta a nada de tu cuenta ni a la garantía del portátil."),
        ("¿El cupón CUPON-ORION50 sirve para comprar un ratón de 35 €?",
         "No, el cupón exige una compra superior a 100 €. Podrías sumar el ratón a otra cosa."),
        ("¿Y una funda de 79 € más el ratón de 35 €?",
         "Sí: 114,00 € supera los 100 €, y con el cupón pagarías 64,00 €."),
        ("Perfecto, lo haré así esta semana.",
         "Estupendo. Recuerda que caduca el 30 de junio de 2025."),
        ("¿Tenéis la funda en gris?",
         "Sí, la funda Orion Sleeve está en gris y en azul marino, ambas a 79 €."),
        ("Gris. Última pregunta: ¿mi teléfono sigue bien en la ficha?",
         "Sí, figura +34 612 345 678 y el correo lucia.fernandez@example.es."),
        ("Gracias por todo, de verdad.",
         "¡A ti, Lucía! Que disfrutes del portátil. Aquí estamos para lo que necesites."),
    ]:  # fmt: skip
        c.say(ask, answer)


def _new_order(c: Chat) -> None:
    c.later(days=5, hour=12)
    for user, bot in [
        ("Hola, ya he hecho el pedido de la funda y el ratón con el cupón.",
         "Hola, Lucía. Veo el pedido #PED-51877: funda Orion Sleeve gris (79,00 €) y ratón "
         "Glide (35,00 €)."),
        ("Pero me ha cobrado 114,00 €, no 64,00 €. El cupón no se aplicó.",
         "Tienes razón, el cargo fue de 114,00 € y CUPON-ORION50 no figura en el pedido."),
        ("Lo puse en el carrito, seguro.",
         "Lo veo en el registro: el código se introdujo con un espacio al final y no se "
         "validó. Es un fallo nuestro de la web."),
        ("¿Y ahora qué?", "Te devuelvo los 50,00 € a la tarjeta terminada en 4417, referencia "
         "REM-91288, y marco el cupón como usado."),
        ("¿Cuánto tarda?", "Como la otra vez: de 5 a 7 días hábiles."),
        ("¿Cuándo llega el pedido?",
         "El #PED-51877 sale hoy y llega el jueves 24 de abril, de 9:00 a 14:00."),
        ("¿A la dirección de casa o a la de la empresa?",
         "A la de envío del pedido: Calle Mayor 12, 3ºB, 28013 Madrid."),
        ("Mejor a la oficina, Calle de Alcalá 145, 4º izquierda.",
         "Cambiado: el #PED-51877 irá a Calle de Alcalá 145, 4º izquierda, 28009 Madrid."),
        ("¿Hay alguien en recepción de 9 a 14?", "No lo sé; el mensajero llamará antes al "
         "+34 612 345 678."),
        ("Vale. ¿La factura de este pedido a nombre de la empresa también?",
         "Sí, la emitiré a Estudio Fernández SL, B-87654321."),
        ("¿El ratón es compatible con el Orion 15?",
         "Sí, el Glide funciona por Bluetooth 5.1 o con su receptor USB-C."),
        ("¿Y la funda es de 15 pulgadas?", "Sí, la Orion Sleeve es a medida para el Orion 15."),
        ("Me ha llegado el correo de la devolución de 50 €.",
         "Perfecto, REM-91288 está en curso."),
    ]:  # fmt: skip
        c.say(user, bot)
    c.later(days=4, hour=13)
    for user, bot in [
        ("Ha llegado todo a la oficina.", "¡Estupendo! ¿Todo en buen estado?"),
        ("Sí, todo perfecto esta vez, caja incluida.", "Me alegro mucho, Lucía."),
        ("Y ya me han devuelto los 50 €.",
         "Confirmado: REM-91288 abonada. El pedido #PED-51877 queda cerrado."),
        ("Gracias, Marta. Hasta la próxima.", "¡Hasta la próxima, Lucía!"),
    ]:  # fmt: skip
        c.say(user, bot)
