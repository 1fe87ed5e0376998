"""The scan's gate shortcuts answer as searching each gate whole does: gates a run of digits
answers, gates rewritten to lead with a literal, gates searched from the first digit;
and the scan finds the same candidates on every text of the dev data (issue 29)."""

from __future__ import annotations

import json
import re
import re._parser as sre_parse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.facts.extract import (
    _DIGIT_LED,
    _LITERAL_LED,
    _PATTERNS,
    _RANKED,
    _RUN_GATES,
    _candidates,
)
from tests.memory.facts.test_digit_runs import _every_match, _is_digit_atom

_ROOT = Path(__file__).resolve().parents[3]
_DEV = [_ROOT / "tests" / "data", _ROOT / "bench" / "data" / "support_dev"]
_DIGIT = re.compile(r"\d")
_GATES = {gate.pattern for rule in _PATTERNS for gate in rule.gates}
_PIECES = (
    "1 12 123 1234 12345 123456789 0 06 ٣٣ ٣ 2024-03-05 10:30 1.2.3.4 44.556.677-K 5/3 "
    "12/2024 a.b ns1.example.net x.es 00:1A:2B:3C:4D:5E 1a-2b-3c-4d 2a0c::/48 ::1 fe80:: "
    "A-B a:b 3:z ab:cd . / : - _ x X é ß İ ı ſ \n swift SWIFT ſwift swıft BIC Bic bic a_b "
    "a_ _1 x. $ € £ ¥ EUR1 EUR 1 ABC ABCD 4 US$ 3€"
)
_texts = st.lists(st.sampled_from([*_PIECES.split(" "), " ", "", "."]), max_size=14).map(
    "".join
) | st.text(alphabet="0123456789٣abAB.:/- \nxé", max_size=20)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _dev_texts() -> list[str]:
    """Every string of the dev data's JSON files and every line of its text files, with
    their lines and sentences (what folds read apart)."""
    texts: list[str] = []
    for folder in _DEV:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in {".json", ".jsonl", ".txt"}:
                continue
            raw = path.read_text(encoding="utf-8")
            texts.extend(raw.splitlines())  # a body cut short in a fixture is text too
            for line in raw.splitlines() if path.suffix == ".jsonl" else [raw]:
                try:
                    texts.extend(_strings(json.loads(line)))
                except json.JSONDecodeError:
                    continue
    pieces = [p for t in texts for p in (t, *t.split("\n"), *re.split(r"(?<=[.!?])\s", t))]
    return list(dict.fromkeys(p for p in pieces if p))


def test_the_dev_data_gives_the_same_candidates() -> None:
    """On every text of the dev data the scan finds what every gate searched whole finds."""
    texts = _dev_texts()
    assert len(texts) > 1000, len(texts)
    for text in texts:
        assert sorted(_candidates(text)) == _every_match(text), text


def test_each_shortcut_is_for_a_gate_of_the_rules() -> None:
    """No shortcut is left over from a gate since rewritten, and every gate is searched
    in its literal-led form when it has one."""
    assert set(_LITERAL_LED) <= _GATES
    assert set(_RUN_GATES) <= _GATES
    for _, rule, _, gates in _RANKED:
        written = [g.pattern for g in rule.gates if g.pattern not in _RUN_GATES]
        assert [g.pattern for g, _ in gates] == [_LITERAL_LED.get(p, p) for p in written]


def test_run_gates_are_runs_of_digits() -> None:
    """Each gate a run answers is that many digits in a row and nothing else."""
    for gate, run in _RUN_GATES.items():
        parsed = list(sre_parse.parse(gate))
        assert len(parsed) == run, gate
        assert all(op is sre_parse.IN and av == [(sre_parse.CATEGORY, sre_parse.CATEGORY_DIGIT)]
                   for op, av in parsed), gate  # fmt: skip


def test_digit_led_gates_start_with_a_digit() -> None:
    """A gate marked digit-led has a digit, never optional, as its first parsed item."""
    marked = {gate for gate in _GATES if _DIGIT_LED.match(gate)}
    assert r"\d\s?(?i:[ap])" in marked
    assert r"[6789]\d{2}[ .]\d{2}" in marked
    assert r"[0-9A-Fa-f]?:[0-9A-Fa-f:]" not in marked
    assert r"\+\d" not in marked
    for gate in marked:
        op, av = next(iter(sre_parse.parse(gate)))
        if op is sre_parse.MAX_REPEAT:
            assert av[0] >= 1, gate
            op, av = av[2][0]
        assert _is_digit_atom(op, av), gate


@settings(max_examples=1500, deadline=None)
@given(_texts)
@example("a.b 1.2 x.es")
@example("ab:cd 3:z")
@example("1a-2b-3c-4d-5e-6f")
@example("12/2024")
@example("٣.٣٣٣.٣٣٣")
def test_each_shortcut_answers_as_its_gate(text: str) -> None:
    """Literal-led forms, runs and searches from the first digit give each gate's answer."""
    digit = _DIGIT.search(text)
    at = digit.start() if digit else 0
    run = max(map(len, re.findall(r"\d+", text)), default=0)
    for gate in _GATES:
        whole = re.search(gate, text) is not None
        if gate in _LITERAL_LED:
            assert (re.search(_LITERAL_LED[gate], text) is not None) == whole, (gate, text)
        if gate in _RUN_GATES:
            assert (run >= _RUN_GATES[gate]) == whole, (gate, text)
        if _DIGIT_LED.match(gate):
            searched = re.compile(_LITERAL_LED.get(gate, gate)).search(text, at) is not None
            assert searched == whole, (gate, text)


def test_the_swift_gate_is_led_by_every_case_of_its_first_letters() -> None:
    """Ignoring case, "s" and "b" match exactly the characters its class lists ("ſ" too)."""
    everything = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000)
    firsts = {match.group() for match in re.finditer("(?i:[sb])", everything)}
    assert firsts == set("SsſBb")
    assert _LITERAL_LED[r"(?i:swift|bic)"].startswith("[SsſBb]")
