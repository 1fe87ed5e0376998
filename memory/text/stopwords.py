"""Stop words of Spanish and English, accents folded, one list per use.

`RECALL_STOP_WORDS`: the function words, never searched for, and the routine words of a
support chat (greetings, thanks, "ok") that say nothing about what a message is about, so
"gracias, sigo igual" recalls nothing. `TOPIC_STOP_WORDS`: what the topic heuristic does
not count as a content word, a longer list (small talk, opinions, fillers). The two are
not merged: each list is part of how its reader behaves (the recall index stores its
terms; the topic profile was tuned on its own).
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
    while who whom why will with would you your yours yourself mine theirs please thanks
    thank hello hi hey ok okay yes yeah sure great fine good morning evening remember
    recall told tell said say again us let know one
"""
_TOPIC = """
    a about above after again all also am an and any anyone anything are aren as at be
    because been before being below between both but by can could did do does doing done
    don down during each else even ever every few for from further get gets getting got
    had has have having he her here hers him his how i if in into is it its itself just
    let like me more most much my myself no nor not now of off oh ok okay on once one only
    or other our ours out over own really same say said see she should so some something
    such than that thats the their theirs them then there these they thing things think
    this those though through to too under until up us very want was way we well were what
    when where which while who whom why will with would yeah yes yet you your yours
    yourself im ive id ill youre dont doesnt didnt isnt wasnt cant wont lol haha hi hello
    hey thanks thank please sure great good nice cool wow awesome fun love lot lots know
    go going make makes made try tried trying still going need new time today day right
    back sorry well also kind sounds sound fine bit pretty always never maybe much many
    s t m re ve ll d
    al algo algun alguna alguno algunos ante antes aqui asi aun aunque bien cada como con
    contra cual cuales cuando de del desde donde dos el ella ellas ellos en entre era eres
    es esa esas ese eso esos esta estaba estado estamos estan estar estas este esto estos
    estoy fue fueron ha habia han has hay hace hacer hasta he la las le les lo los mas me
    mi mis mucho muy nada ni no nos nosotros nuestra nuestro o otra otro para pero poco por
    porque pues que quien se sea ser si sido sin sobre solo son su sus tambien tan tanto te
    tener tengo ti tiene tienen todo todos tu tus un una uno unos usted ustedes ya yo
    hola gracias favor vale bueno buena claro dale ok listo perfecto entonces ahora hoy
    hate enjoy enjoys favorite favourite prefer glad understand appreciate interesting
    wonderful weird funny bad best better real ready use used usually whatever may ask
    asked told tell definitely certain super far long big little high kind true sure
    exactly totally probably actually already lately recently every someone somebody
    people person guess mean means feel feeling hear heard seems seem look looks fine
    amazing excellent perfect ok alright thing stuff lot bye
    genial excelente claro seguro creo parece siento entiendo igual mismo misma cosa
    cosas gente mejor peor grande poco mucha muchas muchos tal vez quizas verdad
    sigue sigo seguir todavia otra vez puedo puede pueden quiero quisiera queria necesito
    """
SPANISH = frozenset(_SPANISH.split())
ENGLISH = frozenset(_ENGLISH.split())
RECALL_STOP_WORDS = SPANISH | ENGLISH
TOPIC_STOP_WORDS = frozenset(_TOPIC.split())
