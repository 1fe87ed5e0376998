"""Salience of the key-facts section: what deserves a line, its cap, who the user is."""

from __future__ import annotations

from memory.facts import Fact, extract_facts, identity_facts
from memory.fold.guard import KEY_FACTS_SHARE, guard_summary
from memory.fold.keyfacts import _sentence_tied, cap_key_facts, render_fact, salient_facts
from memory.fold.summarizer import required_facts
from memory.types import Exchange


def ex(n: int, user: str, reply: str = "De acuerdo.") -> Exchange:
    return Exchange(id=n, episode_id=1, user_text=user, reply_text=reply, signal=True)


def words(text: str) -> int:
    return len(text.split())


def kinds_values(facts: list[Fact]) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in facts]


def test_routine_times_and_percentages_are_not_required() -> None:
    """'lo probé a las 14:30' and a status line's percentage stay out of the key facts."""
    batch = [
        ex(1, "Lo probé a las 14:30 y sigue igual.", "Anotado: batería al 80 %, sin cambios."),
        ex(2, "Otra vez a las 15:10, nada.", "Vale, el brillo al 30 % tampoco ayuda."),
    ]
    assert required_facts("", batch) == []


def test_times_and_percentages_tied_to_a_commitment_are_required() -> None:
    """'te llamo el martes a las 10:00' and a discount's percentage are kept."""
    batch = [
        ex(1, "¿Cuándo sabré algo?", "Te llamo el martes a las 10:00 con la respuesta."),
        ex(2, "¿Y el precio?", "Te aplico un descuento del 15 % en la renovación."),
        ex(3, "OK, I'll call you tomorrow at 9:30 am, fine?", "Great."),
    ]
    values = [f.value for f in required_facts("", batch)]
    assert values == ["10:00", "15 %", "9:30 am"]


def test_salient_facts_keep_every_other_kind() -> None:
    """Salience only filters incidental kinds: ids, amounts and dates always count."""
    text = "El pedido #PED-1 de 30 € llegó el 3 de marzo a las 14:30."
    assert kinds_values(salient_facts(text)) == [
        ("id", "#PED-1"),
        ("amount", "30 €"),
        ("date", "3 de marzo"),
    ]


def test_a_value_seen_many_times_counts_once() -> None:
    """An IBAN repeated in fifty exchanges is one required fact, one key-facts line."""
    iban = "ES91 2100 0418 4502 0005 1332"
    batch = [ex(i, f"Recordad, el IBAN es {iban}.", f"Sí, {iban}.") for i in range(50)]
    assert kinds_values(required_facts("", batch)) == [("iban", iban)]


def test_cap_sheds_incidental_values_before_identity_and_money() -> None:
    """Under pressure: times, then percentages, dates, amounts; name and IBAN stay."""
    facts = [
        Fact("time", "14:30"),
        Fact("name", "Marta Ruiz"),
        Fact("percent", "80 %"),
        Fact("date", "3 de marzo"),
        Fact("iban", "ES9121000418450200051332"),
        Fact("amount", "30 €"),
        Fact("ip", "185.42.17.9"),
    ]
    cost = {f: words(render_fact(f)) for f in facts}
    keep = ("Marta Ruiz", "ES9121000418450200051332", "185.42.17.9")
    budget = sum(cost[f] for f in facts if f.value in keep)
    kept, dropped = cap_key_facts(facts, budget, words)
    assert [f.value for f in kept] == list(keep)
    assert [f.kind for f in dropped] == ["time", "percent", "date", "amount"]


def test_key_facts_section_has_its_own_cap() -> None:
    """However short the body, the section stays within its share of the summary cap."""
    required = [Fact("account", str(10_000 + i), "cuenta") for i in range(200)]
    result = guard_summary(
        "El cliente tuvo un problema y se le ayudó.",
        required=required,
        previous_text="",
        language="es",
        cap_tokens=400,
        count_tokens=words,
    )
    section = result.text.split("Datos clave:", 1)[1]
    assert words(section) <= 400 * KEY_FACTS_SHARE
    assert result.dropped
    assert len(result.dropped) < 200


def test_pinned_opening_facts_survive_the_section_cap() -> None:
    """The opening's identity facts are pinned: later values are shed before them."""
    pinned = [Fact("name", "Marta Ruiz"), Fact("account", "48213")]
    later = [Fact("id", f"INC-{i}") for i in range(100)]
    result = guard_summary(
        "El cliente tuvo un problema y se le ayudó.",
        required=[*pinned, *later],
        previous_text="",
        language="es",
        cap_tokens=120,
        count_tokens=words,
        pinned=frozenset(pinned),
    )
    assert "Marta Ruiz" in result.text
    assert "48213" in result.text
    assert not set(pinned) & set(result.dropped)


def test_restored_lines_say_what_the_value_is() -> None:
    """The guard writes 'IP del servidor: 185.42.17.9', not a bare value."""
    facts = extract_facts("La IP del servidor es 185.42.17.9 y el DNS es ns1.example.net.")
    result = guard_summary(
        "El cliente tuvo un problema con su servidor y se le ayudó a revisarlo entero.",
        required=facts,
        previous_text="",
        language="es",
        cap_tokens=200,
        count_tokens=words,
    )
    assert result.text.endswith(
        "Datos clave:\n- IP del servidor: 185.42.17.9\n- DNS: ns1.example.net"
    )


def test_identity_facts_are_the_users_own() -> None:
    """Name, company, customer ids and contacts of the user; not the agent's name, not
    the case's order or server; the latest phone first."""
    exchanges = [
        ex(1, "Hola, soy Marta Ruiz, de la empresa Acme S.L.", "Hola Marta, soy Carlos Gil."),
        ex(2, "Mi número de cliente 48213, el pedido #PED-9.", "Visto."),
        ex(3, "El servidor es 185.42.17.9, mi móvil +34 612 345 678.", "Apuntado."),
        ex(4, "Correo marta@acme.es; vivo en calle Mayor 5, 28013 Madrid.", "Gracias."),
        ex(5, "Perdón, el móvil nuevo es +34 699 111 222.", "Cambiado."),
        ex(6, "Y la cuenta para el abono ES91 2100 0418 4502 0005 1332.", "Ok."),
    ]
    assert kinds_values(identity_facts(exchanges)) == [
        ("name", "Marta Ruiz"),
        ("company", "Acme S.L"),
        ("account", "48213"),
        ("iban", "ES91 2100 0418 4502 0005 1332"),
        ("phone", "+34 699 111 222"),
        ("phone", "+34 612 345 678"),
        ("email", "marta@acme.es"),
        ("address", "calle Mayor 5, 28013 Madrid"),
    ]


def test_identity_facts_read_plain_texts_too() -> None:
    """Texts work like exchanges: 'my name is…', 'I'm calling from…' in English."""
    texts = ["Hi, my name is Priya Patel, I'm calling from Globex Ltd.", "Thanks!"]
    assert kinds_values(identity_facts(texts)) == [
        ("name", "Priya Patel"),
        ("company", "Globex Ltd"),
    ]


def test_a_folds_sentences_are_read_once_across_bodies() -> None:
    """The next fold's body repeats the sentences of the last: only the new one is read."""
    tag = "x" + str(id(object()))
    body = f"Lo pruebo a las 10:30 ({tag}).\nLa recogida queda para las 16:00 ({tag})."
    assert salient_facts(body)
    before = _sentence_tied.cache_info()
    salient_facts(f"{body}\nNos vemos a las 18:15 ({tag}).")
    after = _sentence_tied.cache_info()
    assert after.misses - before.misses == 1


def test_key_fact_words_are_in_the_conversation_language() -> None:
    """A value that needs a word to be read again gets it in the chat's language: an
    English summary says "person" and "message", a Spanish one "persona", "mensaje" and
    "fecha"; each line reads back as the same fact."""
    said = {
        "en": "The installer was called Gary and the screen says 'code expired'.",
        "es": "La titular es Lucía Fernández, la cita el 14/03, y sale 'pago rechazado'.",
    }
    lines = {lang: [render_fact(f, lang) for f in extract_facts(t)] for lang, t in said.items()}
    assert lines["en"] == ["- person: Gary", "- message: «code expired»"]
    assert lines["es"] == [
        "- persona: Lucía Fernández",
        "- fecha: 14/03",
        "- mensaje: «pago rechazado»",
    ]
    for lang, text in said.items():
        for fact, line in zip(extract_facts(text), lines[lang], strict=True):
            assert [(f.kind, f.value) for f in extract_facts(line)] == [(fact.kind, fact.value)]


def test_a_key_facts_list_in_either_language_is_kept_as_written() -> None:
    """Fold after fold, the guard takes its own list apart and writes it again in the
    chat's words; when the chat's language changes, the list already written stays as
    it is and its facts are not listed twice."""
    gary = extract_facts("the installer was called Gary")[0]

    def fold(text: str, language: str) -> str:
        return guard_summary(
            text or "Installer visit booked.",
            required=[gary],
            previous_text=text,
            language=language,
            cap_tokens=200,
            count_tokens=words,
        ).text

    for first, then in (("en", "es"), ("es", "en")):
        once = fold("", first)
        twice = fold(once, first)
        assert twice == once
        assert twice.splitlines()[-1] == render_fact(gary, first)
        assert fold(twice, then).count("Gary") == 1


def test_a_spanish_date_or_time_is_written_the_way_it_is_said() -> None:
    """ "el 14/03", "a las 23:48": the words a user's message most often holds, read back
    as the same fact; an English chat writes the value alone."""
    said = "lo presenté el 20 de octubre a las 23:48, y quedamos a la 1:30"
    facts = extract_facts(said)
    assert [render_fact(f, "es") for f in facts] == [
        "- el 20 de octubre",
        "- a las 23:48",
        "- a la 1:30",
    ]
    assert [render_fact(f, "en") for f in facts] == ["- 20 de octubre", "- 23:48", "- 1:30"]
    for fact in facts:
        assert extract_facts(render_fact(fact, "es")) == [fact]


def test_an_ordinal_day_is_written_so_that_it_reads_back() -> None:
    """ "change delivery to the 28th": "- the 28th", in either language, read back as the
    same date (a line that did not would leave the next fold nothing to require)."""
    (fact,) = extract_facts("change delivery to the 28th")
    for language in ("en", "es"):
        line = render_fact(fact, language)
        assert line == "- the 28th"
        assert extract_facts(line) == [fact]
