"""Function words of Spanish and English, accents folded: never searched for.

Also the routine words of a support chat (greetings, thanks, "ok") that say nothing
about what a message is about, so "gracias, sigo igual" recalls nothing.
"""

from __future__ import annotations

_SPANISH = """
    a al algo algun alguna algunas alguno algunos ante antes aqui asi aun aunque bajo
    bien cada casi como con contra cual cuales cualquier cuando cuanto de del desde
    donde dos el ella ellas ellos en entre era eran eres es esa esas ese eso esos esta
    estaba estado estamos estan estar estas este esto estos estoy fue fueron fui ha
    habia han has hasta hay he la las le les lo los mas me mi mis mucho muy nada ni no
    nos nosotros nuestra nuestro o otra otro para pero poco por porque que quien se sea
    segun ser si sido siempre sin sobre solo son soy su sus tambien tan te tenia tengo
    ti tiene tienen todo todos tu tus un una uno unos usted ustedes va vamos y ya yo
    dije dijiste dijo hice hiciste puedes puede puedo quiero quieres favor hola gracias
    vale ok bueno buenas dias tardes noches saludos entonces ahora luego oye mira pues
    claro perfecto genial listo acuerdo recuerdas recuerda acuerdas acuerdo dime decir
    dicho cual cuales cuanto cuanta
"""
_ENGLISH = """
    a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself please thanks thank hello
    hi hey ok okay yes yeah sure great fine good morning evening remember recall told
    tell said say again us let know one
"""
SPANISH = frozenset(_SPANISH.split())
ENGLISH = frozenset(_ENGLISH.split())
FUNCTION_WORDS = SPANISH | ENGLISH
