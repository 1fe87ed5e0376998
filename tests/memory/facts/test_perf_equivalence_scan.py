"""The scan's fast paths find exactly what the scan found before them (issue 29, CPU per
turn): the same candidates, the same facts and labels, the same lines read apart; and
what they rest on: a rule's heads start each of its matches, a rule read at runs of
digits matches only where one starts.

The reference below is the scan as it was before those fast paths, kept here verbatim
(gates searched one by one, each rule's pattern run from its first start word to the end);
both run in this process on every message and reply of the data sets and on generated
texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.data.transcripts import long_support
from memory.facts.extract import (
    _DIGIT,
    _DIGITLESS_KINDS,
    _DIGITS,
    _LOOSE,
    _RANKED,
    _RANKED_DIGITLESS,
    NESTING_KINDS,
    YIELDING_KINDS,
    _bounded,
    _candidates,
    _line_reading,
    _passing,
    _plausible,
    _strip_trailing,
    scan,
)
from memory.facts.labels import label_before
from memory.facts.rules import Fact, FactKind, _lowered, _Rule
from tests.memory.facts.test_gate_shortcuts import _strings

_ROOT = Path(__file__).resolve().parents[3]
Candidate = tuple[int, int, FactKind, int]


def _reference_candidates(text: str) -> Iterator[Candidate]:
    lowered: str | None = None
    digit = _DIGIT.search(text)
    at = digit.start() if digit else 0
    run = max(map(len, _DIGITS.findall(text, at)), default=0) if digit else 0
    for rank, rule, needed, gates in _RANKED if run else _RANKED_DIGITLESS:
        if needed > run or any(gate.search(text, at if led else 0) is None for gate, led in gates):
            continue
        first = 0
        if rule.starts is not None:
            lowered = _lowered(text) if lowered is None else lowered
            if lowered:
                found = rule.starts.search(lowered)
                if found is None:
                    continue
                first = found.start()
        yield from _reference_matches(text, rank, rule, first)


def _reference_matches(text: str, rank: int, rule: _Rule, first: int) -> Iterator[Candidate]:
    for match in rule.pattern.finditer(text, first):
        start, end = match.span(rule.group)
        end = _strip_trailing(text, start, end, rule.kind)
        if end > start and _bounded(text, start, end) and _plausible(rule.kind, text[start:end]):
            yield start, end, rule.kind, rank


def _reference_unsure(line: str) -> int:
    """The rules of `_LOOSE` that do not run on `line` but would find something there."""
    lowered, passed, unsure = _lowered(line), _reference_passing(line), 0
    for bit, (rank, rule) in enumerate(_LOOSE):
        found = rule.starts.search(lowered) if lowered and rule.starts else None
        if passed >> bit & 1 or (lowered and found is None):
            continue
        if next(iter(_reference_matches(line, rank, rule, found.start() if found else 0)), None):
            unsure |= 1 << bit
    return unsure


def _reference_passing(text: str) -> int:
    digits = _DIGIT.search(text) is not None
    return sum(
        1 << bit
        for bit, (_, rule) in enumerate(_LOOSE)
        if (digits or rule.kind in _DIGITLESS_KINDS)
        and all(gate.search(text) for gate in rule.gates)
    )


def _reference_scan(text: str) -> list[tuple[str, str, str]]:
    found = list(_reference_candidates(text))
    # A name gives way to any other kind's reading on one of its characters.
    taken = [(c[0], c[1]) for c in found if c[2] not in YIELDING_KINDS]
    found = [
        c
        for c in found
        if c[2] not in YIELDING_KINDS or all(c[1] <= s or e <= c[0] for s, e in taken)
    ]
    spans = sorted(found, key=lambda c: (c[0], -(c[1] - c[0]), c[3]))
    facts: list[Fact] = []
    end_of_last = -1
    for start, end, kind, _ in spans:
        if start >= end_of_last:
            facts.append(Fact(kind, text[start:end], label_before(text, start)))
            if kind not in NESTING_KINDS:  # its facts read too (not a fast path)
                end_of_last = end
    seen: set[tuple[str, str]] = set()
    out = []
    for fact in facts:
        key = (fact.kind, "".join(fact.value.casefold().split()))
        if key not in seen:
            seen.add(key)
            out.append((fact.kind, fact.value, fact.label))
    return out


def _corpus() -> list[str]:
    """Every message and reply of the data sets and of a long bench case, with its lines,
    and bodies of them quoted."""
    texts: list[str] = []
    for name in (
        "tests/data/topics/sessions.jsonl",
        "bench/data/support_dev/longcase.jsonl",
        "bench/data/support_train/longcase.jsonl",
    ):
        for line in (_ROOT / name).read_text(encoding="utf-8").splitlines():
            texts.extend(_strings(json.loads(line)))
    for turn in long_support(120, seed=48214):
        texts += [turn.user, turn.reply]
    texts = list(dict.fromkeys(p for t in texts for p in (t, *t.split("\n")) if p))
    quoted = [f"- Usuario dijo: «{t}»" for t in texts if "\n" not in t]
    # and summary bodies of quoted lines, as an extractive fold writes them
    return texts + ["\n".join(quoted[at : at + 12]) for at in range(0, len(quoted), 12)]


def _read(facts: Iterable[Fact]) -> list[tuple[str, str, str]]:
    return [(f.kind, f.value, f.label) for f in facts]


def test_every_text_of_the_data_reads_as_before() -> None:
    """Candidates, facts, labels and lines read apart: the same on every data text."""
    texts = _corpus()
    assert len(texts) > 2000, len(texts)
    for text in texts:
        assert sorted(_candidates(text)) == sorted(_reference_candidates(text)), text
        assert _read(scan(text)) == _reference_scan(text), text
        assert _line_reading.__wrapped__(text)[1] == _reference_unsure(text), text
        assert _passing(text) == _reference_passing(text), text


_PIECES = (
    "ticket pedido Pedido PEDIDO caso case cuenta account cliente client póliza poliza "
    "contrato contract part apart partno model modelo codeno code código ref referencia "
    "order orden albarán tracking seguimiento envío calle Calle avenida av. c/ plaza "
    "matrícula plate soy me llamo les habla empresa calling from swift SWIFT BIC bic Bic "
    "BSCHESMMXXX https:// www. x.es ns1.example.net a_b a.b marta_codes @marta user.name "
    "nº no. number : # - / . , 12 123 1234 12345 48213 C1079 12-34-56 PED-310 AB-12-CD "
    "2024-03-05 10:30 pm 15 de julio € $ 84,90 EUR % İ ı ſ K é ó Ñ 0117 496 0321 "
    "612 345 678 91 123 45 67 555.123.4567 44.556.677-K 1.2.3.4 ٣٣ ٣ 28028 Madrid 1234 ABC "
    "3rd of May 5 pm 12/5 04/17/1979 1.250,50 49106 2024 19:45:30 x1 a-1 .5 ,5 :5 el on the "
    "fecha: Date 14/03"
)
_generated = st.lists(
    st.sampled_from([*_PIECES.split(), " ", " ", "\n", "x", "“", "”"]), max_size=20
).map("".join) | st.lists(st.sampled_from(_PIECES.split()), max_size=16).map(" ".join)


@settings(max_examples=1500, deadline=None)
@given(_generated)
@example("ticket x partno 12345 y codeno 4471")
@example("el caso 4821 y la cuenta 12345678, pedido PED-310 / ref 99-1")
@example("SWIFT: BSCHESMMXXX, ſwift BSCHESMMXXX")
@example("calle Alcalá 214, 28028 Madrid")
def test_generated_texts_read_as_before(text: str) -> None:
    """Start words, gates and odd-case letters in any order: the same as before."""
    assert sorted(_candidates(text)) == sorted(_reference_candidates(text))
    assert _read(scan(text)) == _reference_scan(text)
    assert _line_reading.__wrapped__(text)[1] == _reference_unsure(text)
    assert _passing(text) == _reference_passing(text)


_HEADED = [rule for _, rule, _, _ in _RANKED if rule.heads is not None]


def test_heads_are_words_of_letters() -> None:
    """A head holds only letters, so no match (led by a word boundary) starts inside one."""
    assert _HEADED
    for rule in _HEADED:
        assert rule.heads is not None
        assert rule.pattern.pattern.startswith(r"\b"), rule.kind
        for char in re.sub(r"[()|?:\[\]]", "", rule.heads.pattern):
            assert char.isalpha(), (rule.kind, char)


@settings(max_examples=800, deadline=None)
@given(_generated)
@example("PartNo 12345, CODE: 4471, Código 99-1, modelo X5 20, Orden 12/3")
def test_a_head_is_where_every_match_starts(text: str) -> None:
    """Wherever the pattern matches, one of its heads starts there in the lowered text."""
    lowered = _lowered(text)
    for rule in _HEADED:
        assert rule.heads is not None
        for at in range(len(text)) if lowered else ():
            if rule.pattern.match(text, at):
                assert rule.heads.match(lowered, at), (rule.kind, text, at)


_AT_RUNS = [rule for _, rule, _, _ in _RANKED if rule.at_runs]
_DIGIT_AT = re.compile(r"(?<!\d)\d")


@settings(max_examples=800, deadline=None)
@given(_generated)
@example("٣٣:45, 12.5 %, 3rd of May, 91 123 45 67 / 0117 496 0321 ; 1.2.3.4")
@example("el 14/03, on 12/5, fecha: 3/06 a las 5 pm")
def test_every_match_of_an_at_runs_rule_starts_a_run_of_digits(text: str) -> None:
    """Wherever the pattern matches, a digit with no digit before it is there."""
    assert len(_AT_RUNS) > 10
    for rule in _AT_RUNS:
        assert rule.starts is None, rule.kind  # read from the start of the text
        for at in range(len(text)):
            if rule.pattern.match(text, at):
                assert _DIGIT_AT.match(text, at), (rule.kind, text, at)
