"""The fact kinds users give about themselves and their systems (ES/EN), verbatim."""

from __future__ import annotations

import pytest

from memory.facts import extract_facts
from memory.facts.labels import label_before
from memory.fold.keyfacts import PRIORITY, render_fact


def found(text: str, kind: str) -> list[str]:
    return [f.value for f in extract_facts(text) if f.kind == kind]


# Realistic sentences, Spanish and English; each value exactly as the user wrote it.
CASES = [
    (
        "iban",
        "Para la domiciliación usad el ES91 2100 0418 4502 0005 1332, gracias",
        "ES91 2100 0418 4502 0005 1332",
    ),
    ("iban", "mi IBAN es ES9121000418450200051332 (sin espacios)", "ES9121000418450200051332"),
    ("iban", "Please refund to GB29 NWBK 6016 1331 9268 19.", "GB29 NWBK 6016 1331 9268 19"),
    # a check digit mistyped (or made up) at Spain's length: still what the user gave
    ("iban", "mejor a la cuenta ES30 0049 1500 0512 3456 7892", "ES30 0049 1500 0512 3456 7892"),
    ("account", "Mi número de cliente 48213, por si lo necesitáis", "48213"),
    ("account", "mi cuenta es 12345678 y no me deja entrar", "12345678"),
    ("account", "my account number is 1234-5678-9012, can you check?", "1234-5678-9012"),
    ("account", "Tengo la póliza 0045-778 del seguro del coche", "0045-778"),
    ("account", "El contrato nº 88120034 sigue a mi nombre", "88120034"),
    ("account", "Customer ID: 554120. I was charged twice.", "554120"),
    ("account", "La cuenta bancaria es 2100 0418 45 0200051332", "2100 0418 45 0200051332"),
    ("account", "account ID is ACC-58812-QP, workspace is harrowfinch", "ACC-58812-QP"),
    ("account", "¿esto afecta a la renovación de la póliza HG-5512098?", "HG-5512098"),
    ("ip", "La IP del servidor es 185.42.17.9, no responde al ping.", "185.42.17.9"),
    ("ip", "The box answers on 10.0.0.12 inside the VPN", "10.0.0.12"),
    ("ip", "Tiene la IPv6 2001:db8:85a3::8a2e:370:7334 asignada", "2001:db8:85a3::8a2e:370:7334"),
    ("ip", "ping fe80::1 fails", "fe80::1"),
    # inside an SPF record, and networks with their prefix length
    ("ip", '"v=spf1 ip4:185.47.212.93 ip6:2a02:4780:1:7::2f ~all"', "2a02:4780:1:7::2f"),
    ("ip", "el de antes tenia un prefijo 2a0c:5a80:3f12::/48 o algo asi", "2a0c:5a80:3f12::/48"),
    ("ip", "the office LAN is 192.168.10.0/24", "192.168.10.0/24"),
    ("host", "El DNS primario es ns1.example.net y el secundario no", "ns1.example.net"),
    ("host", "La tienda está en shop.example.es desde ayer", "shop.example.es"),
    ("host", "Our mail server mail.acme-corp.com rejects it.", "mail.acme-corp.com"),
    ("tracking", "El número de seguimiento es PK123456789ES", "PK123456789ES"),
    ("tracking", "UPS tracking 1Z999AA10123456784 says delivered", "1Z999AA10123456784"),
    ("tracking", "Me dieron el localizador 0082ZX991234 en Correos Express", "0082ZX991234"),
    (
        "address",
        "Vivo en la calle Alcalá 214, 3.º B, 28028 Madrid",
        "calle Alcalá 214, 3.º B, 28028 Madrid",
    ),
    (
        "address",
        "Calle Mayor 8, 1ºB, 50001 Zaragoza. mi nie es",
        "Calle Mayor 8, 1ºB, 50001 Zaragoza",
    ),
    (
        "address",
        "Paseo de Gracia 21, 4º izda., 08007 Barcelona",
        "Paseo de Gracia 21, 4º izda., 08007 Barcelona",
    ),
    (
        "address",
        "Carrer de Sueca 47, 46006 València, 5º 2ª",
        "Carrer de Sueca 47, 46006 València, 5º 2ª",
    ),
    (
        "address",
        "Enviadlo a Avenida de la Constitución 12, Sevilla",
        "Avenida de la Constitución 12",
    ),
    ("address", "Please ship it to 221B Baker Street, London", "221B Baker Street"),
    (
        "address",
        "send it to 14 Orchard Close, Caversham, Reading RG4 7PL please",
        "14 Orchard Close, Caversham, Reading RG4 7PL",
    ),
    (
        "address",
        "it should be Unit 4, 19 Cheltenham Road, Bristol BS6 5QX",
        "Unit 4, 19 Cheltenham Road, Bristol BS6 5QX",
    ),
    # an English address's town and postcode, UK and US, when they follow
    (
        "address",
        "invoices to a different address, 14 Gloucester Road, Bristol BS7 8AE",
        "14 Gloucester Road, Bristol BS7 8AE",
    ),
    (
        "address",
        "the billing address should be 1 Market St, San Francisco, CA 94105",
        "1 Market St, San Francisco, CA 94105",
    ),
    ("postcode", "the postcode SW1A 1AA is right", "SW1A 1AA"),
    ("card", "will the refund go to the card ending 4242?", "4242"),
    ("card", "Yes, to the card ending in 4242, 5-10 business days.", "4242"),
    ("card", "me cobraron en la tarjeta acabada en 0913 dos veces", "0913"),
    ("card", "mi tarjeta visa que termina en 9876 está bloqueada", "9876"),
    ("card", "ya me ha llegado la tarjeta nueva, acaba en 7725. como la activo?", "7725"),
    ("card", "which card does it go to, i used my visa ending 8814", "8814"),
    ("postcode", "Vivo en el 28028 Madrid, cerca del Retiro", "28028"),
    ("plate", "El coche tiene matrícula 1234 ABC y es gris", "1234 ABC"),
    ("plate", "la furgoneta 4821-KLM no pasó la ITV", "4821-KLM"),
    ("plate", "My licence plate is AB12 CDE", "AB12 CDE"),
    ("name", "Hola, soy Marta Ruiz y os escribo por una factura", "Marta Ruiz"),
    ("name", "Buenas, me llamo José Luis García de la Fuente", "José Luis García de la Fuente"),
    ("name", "Hi, my name is Daniel O'Brien", "Daniel"),
    ("name", "Hello, I'm Priya Patel from accounts", "Priya Patel"),
    (
        "company",
        "Llamo de la empresa Construcciones Pérez S.L. por un pedido",
        "Construcciones Pérez S.L",
    ),
    ("company", "I'm calling from Acme Ltd about our invoice", "Acme Ltd"),
    ("company", "Trabajo en Grupo Logístico Norte y necesitamos ayuda", "Grupo Logístico Norte"),
]


@pytest.mark.parametrize(("kind", "text", "value"), CASES)
def test_each_kind_is_found_verbatim(kind: str, text: str, value: str) -> None:
    """Every kind users give is extracted with its exact value, in Spanish and English."""
    assert value in found(text, kind)
    assert value in text
    assert kind in PRIORITY


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Edita el config.php y sube el index.html", "host"),
        ("Te adjunto informe.pdf y captura.png", "host"),
        ("Actualiza el controlador a la versión 31.0.101", "ip"),
        ("Lo probé a las 14:30:00 y nada", "ip"),
        ("En 2024 EUR pagué 30", "plate"),
        ("Soy cliente desde 2019", "name"),
        ("I'm Sorry, it failed again", "name"),
        ("Hola, soy de Madrid", "name"),
        ("La cuenta de 3 meses", "account"),
        ("the card ending soon, renew by 2027", "card"),
        ("refund landed on the 4242 card", "card"),  # no "ending": a number, not a label
        ("USPS 9400 1000 0000 0000 0000 00", "phone"),  # a run of digit groups, no phone
        ("ES12 3456 7890 1234 5678 no es real", "iban"),  # too short for Spain, bad checksum
    ],
)
def test_look_alikes_are_not_facts_of_that_kind(text: str, kind: str) -> None:
    """File names are not hosts, versions not IPs, a bad checksum of the wrong length no
    IBAN, 'soy de' no name."""
    assert found(text, kind) == []


def test_file_names_are_not_hosts_but_domains_in_the_same_sentence_are() -> None:
    """A known top-level domain makes a host; a file extension (.php, .py) does not."""
    text = "Subí config.php y deploy.py al servidor web01.example.com"
    assert [(f.kind, f.value) for f in extract_facts(text)] == [("host", "web01.example.com")]


@pytest.mark.parametrize(
    ("text", "value", "label"),
    [
        ("La IP del servidor es 185.42.17.9", "185.42.17.9", "IP del servidor"),
        ("mi cuenta es 12345678", "12345678", "cuenta"),
        ("Abrí la incidencia INC-2231 ayer", "INC-2231", "incidencia"),
        ("My phone number is +44 20 7946 0958", "+44 20 7946 0958", "phone"),
        ("el servidor tiene la IP 10.1.1.1", "10.1.1.1", "IP"),
        ("lo probé a las 14:30", "14:30", ""),
        ("185.42.17.9", "185.42.17.9", ""),
    ],
)
def test_a_fact_is_labelled_with_what_it_is(text: str, value: str, label: str) -> None:
    """The words before a value name it when they hold a noun a user looks it up by."""
    assert label_before(text, text.index(value)) == label
    assert [f.label for f in extract_facts(text) if f.value == value] == [label]


@pytest.mark.parametrize(("kind", "text", "value"), CASES)
def test_every_rendered_line_reads_back_as_the_same_fact(kind: str, text: str, value: str) -> None:
    """A key-facts line extracts back to its fact and renders the same again, so the next
    fold keeps it (and the guard can take its own list apart)."""
    for fact in extract_facts(text):
        line = render_fact(fact)
        again = extract_facts(line)
        assert again == [fact], line
        assert render_fact(again[0]) == line  # stable from then on
        if fact.label:
            assert line == f"- {fact.label}: {fact.value}"


def test_labelled_ip_line_says_what_it_is() -> None:
    """The issue's example: 'IP del servidor: 185.42.17.9', not a bare value."""
    (fact,) = extract_facts("Perdona, la IP del servidor es 185.42.17.9.")
    assert render_fact(fact) == "- IP del servidor: 185.42.17.9"
