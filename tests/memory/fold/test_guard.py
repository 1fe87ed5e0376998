"""The fact guard: key facts capped by priority, room made, drafts judged."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.facts import Fact, extract_facts, missing_facts
from memory.fold.guard import GuardResult, guard_summary
from memory.tokens import default_tokenizer
from tests.memory.fold.fold_support import (
    chars,
)


def guard(
    body: str, required: Sequence[Fact], *, cap: int, language: str = "es", previous: str = ""
) -> GuardResult:
    """`guard_summary` counting characters, as most cases here do."""
    return guard_summary(
        body,
        required=required,
        previous_text=previous,
        language=language,
        cap_tokens=cap,
        count_tokens=chars,
    )


def test_guard_trims_key_facts_by_priority_and_reports_dropped() -> None:
    """When the key facts do not fit, times go before ids and amounts; drops reported."""
    required = [Fact("id", "#4821"), Fact("time", "14:30"), Fact("amount", "84,90 €")]
    body = "El usuario reportó un pedido roto; el asistente se ocupa."
    cap = len(body) + len("\n\nDatos clave:") + len("\n- #4821\n- 84,90 €") + 1
    result = guard(body, required, cap=cap)
    assert result.ok
    assert result.text == f"{body}\n\nDatos clave:\n- #4821\n- 84,90 €"
    assert result.dropped == (Fact("time", "14:30"),)
    assert result.missing_after == tuple(required)


def test_guard_shortens_a_long_body_to_make_room() -> None:
    """An over-long single paragraph is cut by sentences, not dropped whole or overflowed."""
    body = " ".join(f"Frase número {i} sin datos." for i in range(40)) + " Pedido #4821 enviado."
    result = guard(body, [Fact("id", "#4821")], cap=200, language="en")
    assert result.ok
    assert len(result.text) <= 200
    assert "#4821" in result.text
    assert "Frase número" in result.text


def test_guard_reuses_an_existing_key_facts_section() -> None:
    """A body already ending in the key-facts list gets the new facts under that heading."""
    body = "Resumen del caso con varios detalles.\n\nKey facts:\n- #1"
    result = guard(body, [Fact("id", "#2")], cap=500, language="en")
    assert result.text == body + "\n- #2"


@settings(deadline=None)
@given(
    body=st.text(min_size=30, max_size=400),
    values=st.lists(
        st.sampled_from(["#4821", "84,90 €", "14:30", "a@b.es", "19 de julio"]), max_size=5
    ),
    cap=st.integers(20, 300),
)
def test_guard_output_always_fits_the_cap(body: str, values: Sequence[str], cap: int) -> None:
    """Whatever the draft and facts, an accepted summary never exceeds the cap."""
    required = [f for v in values for f in extract_facts(v)]
    result = guard(body, required, cap=cap)
    if result.ok:
        assert len(result.text) <= cap
        assert set(result.dropped) == set(missing_facts(required, result.text))


def test_guard_makes_room_for_facts_of_the_lines_it_trims() -> None:
    """Trimming the body for the key facts re-sizes the room: trimmed lines' facts stay."""
    from memory.facts import Fact, extract_facts
    from memory.fold.guard import guard_summary
    from memory.tokens import default_tokenizer

    count = default_tokenizer().count
    early = [
        "- El usuario dijo: «Pagué 1.250,50 € por el pedido #PED-48213 el 3 de marzo.»",
        "- El usuario dijo: «Mi teléfono es +34 612 345 678 y vivo en el 28028 Madrid.»",
    ]
    later = [
        f"- El asistente respondió: «Registro FAC-{3000 + i}, {i},50 € el {1 + i % 28} de "
        f"abril a las 10:{10 + i % 40}; confirmado.»"
        for i in range(60)
    ]
    draft = "\n".join(early + later)
    required = [f for line in early for f in extract_facts(line)]
    result = guard_summary(
        draft,
        required=required,
        previous_text="",
        language="es",
        cap_tokens=300,
        count_tokens=count,
        pinned=frozenset(required),
    )
    assert result.ok
    assert count(result.text) <= 300
    for fact in required:
        assert fact.value in result.text, fact
    assert result.dropped == ()
    assert isinstance(required[0], Fact)


def test_draft_that_leaves_the_facts_to_the_guard_is_not_too_short() -> None:
    """A brief restatement whose numbers the guard puts back lost nothing: the length
    check counts the restored key facts (without it every later fold was rejected)."""
    ids = [f"#48{i}" for i in range(30)]
    previous = "El usuario sigue su pedido.\nDatos clave:\n" + "\n".join(f"- {i}" for i in ids)
    result = guard(
        "El usuario sigue su pedido.", [Fact("id", i) for i in ids], cap=2000, previous=previous
    )
    assert result.ok, result.reject_reason
    assert all(i in result.text for i in ids)
    short = guard("Pedido.", [], cap=2000, previous=previous)
    assert short.reject_reason == "too_short"


def test_guard_caps_a_drafts_own_key_facts_list_as_one_list() -> None:
    """A draft that ends in its own key-facts list (the extractive summarizer writes one)
    and does not fit: the list is written again with the missing facts and capped as a
    whole, by priority; trimming never cuts the heading off the facts under it."""
    count = default_tokenizer().count
    invoices = [f"FAC-{3000 + i}" for i in range(40)]
    draft = "- Usuario dijo: «Mi pedido #PED-1 llegó roto.»\n\nDatos clave:\n" + "\n".join(
        f"- {v}" for v in invoices
    )
    phone = Fact("phone", "+34 612 345 678")
    required = [Fact("id", "#PED-1"), phone, *(Fact("id", v) for v in invoices)]
    result = guard_summary(
        draft,
        required=required,
        previous_text="",
        language="es",
        cap_tokens=150,
        count_tokens=count,
        pinned=frozenset(required[:2]),
    )
    assert result.ok
    assert count(result.text) <= 150
    body, section = result.text.split("\n\nDatos clave:\n")
    assert all(line.startswith("- Usuario dijo: «") for line in body.splitlines())
    assert all(line.startswith("- ") for line in section.splitlines())
    assert "- +34 612 345 678" in section
    assert "#PED-1" in result.text
    assert result.dropped
    assert all(f.value.startswith("FAC-") for f in result.dropped)
    assert result.missing_after == (phone,)  # listed facts were not missing from the draft


def test_a_fact_the_summary_says_where_it_cannot_be_read_back_goes_under_key_facts() -> None:
    """A draft that restates "número de cliente 48-213" as a bare "(48-213)" still holds the
    value, but the next fold would not read it as a fact and would not require it: the
    guard lists it under key facts, where it reads back as itself; a fact the draft says
    readably is not listed again."""
    required = extract_facts("Mi número de cliente 48-213. El pedido #4821 llegó roto.")
    assert {f.value for f in required} == {"48-213", "#4821"}
    draft = "El usuario (48-213) avisa de que el pedido #4821 llegó roto; se tramita."
    assert missing_facts(required, draft) == []
    result = guard(draft, required, cap=400)
    assert result.ok
    body, _, section = result.text.partition("\n\nDatos clave:\n")
    assert body == draft
    listed = extract_facts(section)
    assert [f.value for f in listed] == ["48-213"]
    assert {f.value for f in extract_facts(result.text)} >= {"48-213", "#4821"}
