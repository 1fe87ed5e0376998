"""A text whose every line break follows a closing quote has the facts of its lines: the
same values, kinds and labels as the patterns run over the whole text (issue 29: a fold
reads the previous summary's quoted lines once each, not again inside every new body)."""

from __future__ import annotations

import re
import re._parser as sre_parse
import uuid

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.data.transcripts import long_support
from memory.facts import facts_of
from memory.facts.extract import (
    _DIGITLESS_KINDS,
    _LOOSE,
    _PATTERNS,
    _RANKED,
    _UNSEALED,
    scan,
)
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.summarizer import fold_text, split_key_facts
from memory.tokens import default_tokenizer
from memory.types import Exchange

_VOCAB = [
    "pedido", "#4821", "order-731", "PED-310", "el", "15", "de", "julio", "2024", "12/03/2024",
    "1.250,50", "€", "84,90", "+34", "612", "345", "678", "lucia@example.com", "10.0.0.5",
    "IP", "del", "servidor", "es", "calle", "Alcalá", "214", "28028", "Madrid", "CP",
    "cliente", "C1079", "número", "cuenta", "ES91", "2100", "0418", "4502", "0005", "1332",
    "soy", "Lucía", "Moreno", "empresa", "Acme", "S.L.", "a", "las", "10:30", "pm", "y",
    "matrícula", "1234", "ABC", "ns1.example.net", "https://x.es/a", "seguimiento",
    "RR123456789ES", ",", ".", ":", "-", "(", ")", "?", "‹", "›", "İ", "ı", "Íñigo", "Ángel",
    "12-34-56", "ABC-DEF", "póliza", "tracking", "A1-B2-C3-D4", "me", "llamo", "zip", "Acme",
    "2024", "PED-48213", "order", "N", "número", "de", "cliente",
]  # fmt: skip
_WHO = ["Usuario dijo", "Asistente", "User said", "Assistant", "cuenta 4821", "empresa", "soy"]
_body = st.lists(st.sampled_from(_VOCAB), max_size=12).map(" ".join)
_line = st.builds(
    lambda who, body, english: f"- {who}: “{body}”" if english else f"- {who}: «{body}»",
    st.sampled_from(_WHO),
    _body,
    st.booleans(),
)


def _read(facts: tuple[object, ...]) -> list[tuple[str, str, str]]:
    return [(f.kind, f.value, f.label) for f in facts]  # type: ignore[attr-defined]


@settings(max_examples=400, deadline=None)
@given(st.lists(_line, min_size=2, max_size=6), st.sampled_from(["\n", "\n\n"]), _body)
@example(["- Usuario dijo: «»", "- Asistente: «»"], "\n", "empresa 2024")  # gate elsewhere
@example(["- Asistente: «cuenta 12-34-56»", "- Usuario dijo: «pedido 482»"], "\n", "")
def test_quoted_lines_have_the_facts_of_the_whole_text(
    lines: list[str], gap: str, tail: str
) -> None:
    """Quoted lines, then anything: the same facts and labels as reading it whole."""
    text = gap.join([*lines, tail])
    assert _read(facts_of(text)) == _read(scan(text))


def test_an_unsealed_break_is_read_whole() -> None:
    """A date a model wrapped across a line is still one fact."""
    text = f"- Asistente: «pedido t{uuid.uuid4().hex[:5]}»\nla cita es el 15 de\njulio de 2024"
    assert ("date", "15 de\njulio de 2024") in [(f.kind, f.value) for f in facts_of(text)]


def _takes_any(node: object, found: set[str] | None = None) -> set[str]:
    """What a parsed pattern matches without listing it: any, negated sets and categories."""
    found = set() if found is None else found
    if isinstance(node, sre_parse.SubPattern):
        node = node.data
    if isinstance(node, tuple) and len(node) == 2 and isinstance(node[0], int):
        op, arg = str(node[0]), node[1]
        if op in ("ANY", "NOT_LITERAL") or str(arg).startswith("CATEGORY_NOT"):
            found.add(op)
        if op == "IN" and any(str(item[0]) == "NEGATE" for item in arg):
            space = any(str(item[1]) == "CATEGORY_SPACE" for item in arg)
            found.add("negated set" + (" without whitespace" if space else ""))
            return found
        node = arg
    if isinstance(node, (list, tuple)):
        for item in node:
            _takes_any(item, found)
    return found


def test_no_pattern_can_take_a_closing_quote() -> None:
    """What the seal rests on: only the URL pattern takes unlisted characters, no whitespace."""
    for rule in _PATTERNS:
        taken = _takes_any(sre_parse.parse(rule.pattern.pattern))
        if rule.kind == "url":
            assert taken == {"negated set without whitespace"}, taken
        else:
            assert not taken, (rule.kind, taken)


@settings(max_examples=400, deadline=None)
@given(_body)
def test_the_gates_of_the_other_rules_hold_in_every_text_they_match(text: str) -> None:
    """A rule without start words matches only where it runs: its gates (and a digit) hold."""
    for _, rule, _, _ in _RANKED:
        if rule in (loose for _, loose in _LOOSE) or rule.pattern.search(text) is None:
            continue
        assert all(gate.search(text) for gate in rule.gates), (rule.kind, text)
        assert rule.kind in _DIGITLESS_KINDS or re.search(r"\d", text), (rule.kind, text)


def _case(turns: int) -> list[Exchange]:
    return [
        Exchange(id=n, episode_id=1, user_text=t.user, reply_text=t.reply)
        for n, t in enumerate(long_support(turns, seed=4242), 1)
    ]


async def test_every_body_a_long_fold_writes_reads_the_same_either_way() -> None:
    """Each body forty folds write reads as a whole and is not read again line by line."""
    tokenizer = default_tokenizer()
    summary, exchanges = "", _case(160)
    for start in range(0, len(exchanges), 4):
        outcome = await fold_text(
            ExtractiveSummarizer(tokenizer),
            summary,
            exchanges[start : start + 4],
            language="es",
            cap_tokens=800,
            tokenizer=tokenizer,
        )
        summary = outcome.text
        body, _section = split_key_facts(summary)
        assert _UNSEALED.search(body) is None  # the extractive body is quoted lines
        assert _read(facts_of(body)) == _read(scan(body))
        before = facts_of.cache_info().misses
        facts_of(f"{body}\n- Asistente: «{uuid.uuid4().hex}»")  # one line more
        assert facts_of.cache_info().misses - before == 2  # the text and its new line
