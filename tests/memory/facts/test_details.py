"""Detail shapes the fit half of a written set of support messages showed the guard lost
(`memory.facts.details`, `bench/data/facts_dev/`): each read whole, and kept verbatim in
a key-fact line that reads back as the same fact."""

from __future__ import annotations

import pytest

from memory.facts import extract_facts
from memory.fold.keyfacts import PRIORITY, render_fact, salient_facts
from tests.memory.facts.test_numbers import kinds as _read


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a numbered place or size keeps the word that makes it one
        ("si, pone caja 34 en el lateral", [("slot", "caja 34")]),
        ("quiero cambiar el asiento 14C por ventanilla", [("slot", "asiento 14C")]),
        ("Desk 23 has no network", [("slot", "Desk 23")]),
        ("I ordered size 10 but got size 12", [("slot", "size 10"), ("slot", "size 12")]),
        ("soy del piso 5ºC", [("slot", "piso 5ºC")]),
        ("vivo en el 4º 2ª", [("slot", "4º 2ª")]),
        ("it's on the 4th floor", [("slot", "4th floor")]),
        ("me sigue saliendo el error 21", [("slot", "error 21")]),
        # someone's name after the word that says who they are (not the user's own)
        ("installer was called Gary", [("person", "Gary")]),
        ("titular Lucía Fernández Ortega", [("person", "Lucía Fernández Ortega")]),
        ("mi suegro, Ramón Castillo Díaz, fallecio", [("person", "Ramón Castillo Díaz")]),
        ("soy Marta Ruiz", [("name", "Marta Ruiz")]),
        # a quantity in a unit
        ("you only delivered 300 litres", [("measure", "300 litres")]),
        ("upgrade to the 1TB plan", [("measure", "1TB")]),
        ("pedi 2 x 500 g de cafe", [("measure", "2 x 500 g")]),
        # an amount: a Spanish one without its currency, a slang currency word
        ("el pack sale a 3,49 y me cobrasteis 9,99", [("amount", "3,49"), ("amount", "9,99")]),
        ("me costo 40 pavos", [("amount", "40 pavos")]),
        # a US street with its direction, an Irish town with its district and Eircode
        (
            "I live at 2207 W Division St, Chicago, IL 60622",
            [("address", "2207 W Division St, Chicago, IL 60622")],
        ),
        (
            "power cuts at 44 Oak Street, Dublin 8, D08 X2F4",
            [("address", "44 Oak Street, Dublin 8, D08 X2F4")],
        ),
        # codes
        ("error 0x80070005 al instalar", [("id", "0x80070005")]),
        ("the error code on the dishwasher is E24", [("id", "E24")]),
        ("reference PC/88/41273", [("id", "PC/88/41273")]),
        ("EIN 84-2917733 on the form", [("id", "84-2917733")]),
        ('our Wi-Fi is "Henderson_Family_5G"', [("id", "Henderson_Family_5G")]),
        # postcodes without their label
        ("postcode is M14 5RT", [("postcode", "M14 5RT")]),
        ("my order to M5V 2T6 is stuck", [("postcode", "M5V 2T6")]),
        # a Mexican number in its groups
        ("el tel 55 3421 8870", [("phone", "55 3421 8870")]),
        # dates: a weekday and its day (with the month when said), an ordinal day, an expiry
        ("it was due Tuesday 14th", [("date", "Tuesday 14th")]),
        ("la cita era el jueves 9 de 10 a 14h", [("date", "jueves 9")]),
        ("el sábado 14 de marzo a las 10:00", [("date", "sábado 14 de marzo"), ("time", "10:00")]),
        ("change delivery to the 28th", [("date", "28th")]),
        ("la nueva caduca 09/29", [("date", "09/29")]),
        # three numbers split by dots are a version
        ("la versión de la app es la 3.12.0", [("version", "3.12.0")]),
    ],
)
def test_each_detail_is_read_whole(text: str, expected: list[tuple[str, str]]) -> None:
    """The value as said, of its kind."""
    assert _read(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "lo he intentado 3 veces",  # a count, no unit
        "somos dos personas y 2 noches",  # a count is its own kind, no measure nor date
        "it's the 2nd time this happens",  # an ordinal that is no day
        "I sat 20 minutes waiting",  # "sat" is no Saturday
        "call me Friday 3pm",  # the time is the fact, not "Friday 3"
        "the 5G network is down",  # no unit
        "mi coche 2019 no arranca",  # a year is no slot
        "the total was 1.234.567",  # thousands, no version
    ],
)
def test_what_is_no_detail_stays_out(text: str) -> None:
    """Incidental numbers read as no detail of these kinds."""
    found = {kind for kind, _ in _read(text)}
    assert not found & {"slot", "measure", "version", "date"}, _read(text)


def test_new_kinds_rank_and_render_back_as_themselves() -> None:
    """A slot and a measure have a place in the cap's ranking, and their key-fact lines
    read back as the same fact (else the next fold would not require them)."""
    for text in ("caja 34", "asiento 14C", "4th floor", "300 litres", "2 x 500 g", "Jo"):
        said = f"era para my sister {text}" if text == "Jo" else f"me dijeron {text} ayer"
        (fact,) = salient_facts(said)
        assert fact.kind in PRIORITY
        line = render_fact(fact)
        assert text in line
        assert extract_facts(line) == [fact]


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ('I\'m locked out, it says "Too many failed attempts. Try again in 24 hours"',
         "Too many failed attempts. Try again in 24 hours"),
        ("it's stuck on 'Connecting to Wi-Fi'", "Connecting to Wi-Fi"),
        ("la app dice «Servicio no disponible»", "Servicio no disponible"),
        ('me sale literal: "No se pudo (código 4012)"', "No se pudo (código 4012)"),
    ],
)  # fmt: skip
def test_a_quoted_message_is_one_detail_and_what_it_holds_is_read_too(
    text: str, quoted: str
) -> None:
    """What a screen said, quoted after the word that says so; a code inside it is still
    its own fact; its key-fact line reads back as the same fact."""
    facts = extract_facts(text)
    assert facts[0].kind == "quote"
    assert facts[0].value == quoted
    line = render_fact(facts[0])
    assert quoted in line
    assert extract_facts(line)[0] == facts[0]
    if "4012" in text:
        assert ("id", "4012") in _read(text)


def test_a_quoted_word_without_a_word_that_says_so_is_no_detail() -> None:
    """A button to press is no message a screen showed."""
    assert _read('pulsa "Aceptar" y ya esta') == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Priya Raman", [("named", "Priya Raman")]),
        ("ok the company was Brightside Cleaning, they came", [("named", "Brightside Cleaning")]),
        ("Notaría de Villalba Ortiz, en la calle colon", [("named", "Notaría de Villalba Ortiz")]),
        ("me voy a la Autoescuela Ronda Sur", [("named", "Autoescuela Ronda Sur")]),
        ("our Studio 4.2 Gable kit", [("named", "Studio 4.2 Gable")]),
        ("Thanks Priya Raman", [("named", "Priya Raman")]),  # not the greeting
        ("El Corte Inglés", [("named", "Corte Inglés")]),
        # with its number, inside a sentence
        ("el router Livebox 6 se ha vuelto a quedar", [("named", "Livebox 6")]),
        ("installing it on Windows 11, same thing", [("named", "Windows 11")]),
        (
            "comunidad de Ribera del Sena 14, piso 3ºB",
            [("named", "Ribera del Sena 14"), ("slot", "piso 3ºB")],
        ),
        # a title with the name it goes with
        ("does Mr Okonkwo have to agree", [("person", "Mr Okonkwo")]),
        ("la Sra. Quintana me llamó", [("person", "Sra. Quintana")]),
        # another kind's reading on its characters wins: the name yields
        ("Pedido PED-4471 cancelado", [("id", "PED-4471")]),
        ("the Bosch PUE611BB5E hob", [("named", "Bosch"), ("id", "PUE611BB5E")]),
        ("Saturday 19 September 2026", [("date", "Saturday 19 September")]),
        ("soy Lucía Fernández", [("name", "Lucía Fernández")]),
    ],
)
def test_a_name_of_two_capitalised_words_is_a_detail(
    text: str, expected: list[tuple[str, str]]
) -> None:
    """A place, a company, a product or a person named without a word for it."""
    assert _read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hi, I'm in Toronto, my order is stuck", [("named", "Toronto")]),
        ("the quote from Mark said $949", [("named", "Mark"), ("amount", "$949")]),
        ("it was dispatched via Evri on Monday", [("named", "Evri")]),
        ("me ha llegado una carta de Hacienda", [("named", "Hacienda")]),
        ("vivimos en Madrid 2024", [("named", "Madrid")]),  # not the year with it
        ("Hola Marta, soy yo", [("named", "Marta")]),
        # the key-fact line it renders as, the word alone on its line
        ("- Evri", [("named", "Evri")]),
    ],
)
def test_one_capitalised_word_inside_a_sentence_is_a_name(
    text: str, expected: list[tuple[str, str]]
) -> None:
    """A place, a company or a person named in one word, where a capital is no sentence's
    first letter."""
    assert _read(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Buenos Días",
        "Tuesday Morning",
        "Madrid",  # a sentence's first word
        "cocinas robledal",
        "Esperé 20 minutos",  # a sentence's first word and a count
        "our Wi-Fi is down",  # a hyphenated word
        "the refund arrives on Tuesday",  # a weekday
        "CASO: 7781, Póliza 5521-X",  # after a comma or a colon
        "- Usuario dijo: «hola»",  # a summary line's speaker
    ],
)
def test_a_greeting_a_sentence_start_or_lower_case_is_no_name(text: str) -> None:
    """A greeting or a day is no name, nor a sentence's first word, nor what was typed
    in lower case, nor a word after a comma."""
    assert "named" not in {kind for kind, _ in _read(text)}


def test_a_name_ranks_low_and_renders_back_as_itself() -> None:
    """Shed before the case's numbers when the key facts must shrink, and read back."""
    (fact,) = salient_facts("the company was Brightside Cleaning")
    assert PRIORITY["named"] < PRIORITY["date"]
    assert render_fact(fact, "en") == "- Brightside Cleaning"
    assert extract_facts(render_fact(fact, "en")) == [fact]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes 2 adults, me and my partner", [("count", "2 adults")]),
        ("checked with an app, says 41,200 actuations", [("count", "41,200 actuations")]),
        ("somos 4 personas", [("count", "4 personas")]),
        ("un pedido de 50 camisetas para la peña", [("count", "50 camisetas")]),
        ("2 packs de agua a 3,49", [("count", "2 packs de agua"), ("amount", "3,49")]),
        ("and add 1 more bottle", [("count", "1 more bottle")]),
        ("booked for 2 nights from the 3rd of June",
         [("count", "2 nights"), ("date", "3rd of June")]),
    ],
)  # fmt: skip
def test_how_many_of_a_thing_is_a_count(text: str, expected: list[tuple[str, str]]) -> None:
    """The number with the noun it counts, and what it is of when said."""
    assert _read(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I waited 40 minutes on the phone",  # a time
        "lo he intentado 4 veces",  # a frequency
        "did about 300 shots, no error",  # a guess
        "had it about 2 yrs",
        "maybe 1 in 5 shots",  # a rate
        "ordered size 10 but got size 12",  # a word after the number that is no plural
        "2 things: the bill and the router",  # vague
        "llevo más de 3 cajas",  # a comparison
        "my 2021 Tesla",  # a year
        "la terminasteis el 20 de abril",  # a date
    ],
)
def test_a_time_a_try_or_a_guess_is_no_count(text: str) -> None:
    """Numbers a case does not rest on."""
    assert "count" not in {kind for kind, _ in _read(text)}, _read(text)


def test_a_count_ranks_and_renders_back_as_itself() -> None:
    """A count has a place in the cap's ranking, below the case's ids and money, and its
    key-fact line reads back as the same fact."""
    (fact,) = salient_facts("yes 2 adults, me and my partner")
    assert PRIORITY["count"] < PRIORITY["amount"]
    assert render_fact(fact, "en") == "- 2 adults"
    assert extract_facts(render_fact(fact, "en")) == [fact]
