"""The scan's shortcuts find what searching each gate finds: the longest run of digits
that rules a gate out (`extract._GATE_RUNS`), and start words written so the engine skips
the indices none of them starts at (issue 29)."""

from __future__ import annotations

import re
import re._parser as sre_parse
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.facts.extract import (
    _DIGITLESS_KINDS,
    _GATE_RUNS,
    _PATTERNS,
    _candidates,
    _matches,
)

_DIGIT = re.compile(r"\d")
_C = sre_parse  # the opcodes, by name


def _is_digit_atom(op: Any, av: Any) -> bool:
    """One character that is always a digit (`\\d`, "0", "[0-5]", "[6789]")."""
    if op is _C.LITERAL:
        return _DIGIT.fullmatch(chr(av)) is not None
    if op is not _C.IN or not av:
        return False
    for item_op, item in av:
        if item_op is _C.CATEGORY and item is _C.CATEGORY_DIGIT:
            continue
        if item_op is _C.LITERAL and _DIGIT.fullmatch(chr(item)):
            continue
        if item_op is _C.RANGE and all(_DIGIT.fullmatch(chr(c)) for c in range(*item)):
            continue
        return False
    return True


def _digit_run(sequence: Any) -> int:
    """A run of digits in a row that every match of a parsed pattern puts in the text (a
    lower bound: groups, alternatives and lookarounds break the run around them)."""
    best = run = 0
    for op, av in sequence:
        if _is_digit_atom(op, av):
            run += 1
        elif (
            op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and len(av[2]) == 1 and _is_digit_atom(*av[2][0])
        ):
            run += av[0]  # at least its minimum, all digits: the run goes on through it
        else:
            if op is _C.ASSERT:  # a lookaround that holds reads its digits in the text
                best = max(best, _digit_run(av[1]))
            elif op is _C.SUBPATTERN:
                best = max(best, _digit_run(av[3]))
            elif op is _C.BRANCH:
                best = max(best, min(_digit_run(branch) for branch in av[1]))
            run = 0
        best = max(best, run)
    return best


def test_each_listed_run_is_what_its_gate_holds() -> None:
    """Every gate of two digits in a row or more is listed with its run, and no other."""
    gates = {gate.pattern for rule in _PATTERNS for gate in rule.gates}
    assert set(_GATE_RUNS) <= gates, set(_GATE_RUNS) - gates
    for gate in gates:
        run = _digit_run(sre_parse.parse(gate))
        assert _GATE_RUNS.get(gate, 0) == (run if run >= 2 else 0), (gate, run)


def test_the_parse_reading_counts_runs_as_the_gates_do() -> None:
    """The reading of a parse used above, on gates whose runs are plain to see."""
    expected = {r"\d\d": 2, r"-(?<=\d\d\d\d-)": 4, r"[6789]\d{2}[ .]\d{2}": 3, r"\d|x": 0}
    for gate, run in expected.items():
        assert _digit_run(sre_parse.parse(gate)) == run, gate


_PIECES = (
    "1 12 123 1234 12345 123456 123456789 0 06 0117 496 0321 ٣٣ 28028 2024-03-05 10:30 "
    "(555) 123-4567 555.123.4567 +34 612 345 678 44.556.677-K GB 284 1193 56 RA 40918273 "
    "RR123456789ES 1234 ABC 1234-ABC ES91 2100 0418 4502 0005 1332 ab_12 X-12 #A-5521 "
    "part model modelo code codigo código sn s/n imei serial ticket pedido nº cliente "
    "cuenta póliza CP zip - / . , : _ A B Z de marzo Madrid calle € % pm İ ı ſ"
)
_texts = st.lists(
    st.sampled_from([*_PIECES.split(), " ", "\n", "", "x"]), min_size=1, max_size=16
).map("".join) | st.lists(st.sampled_from(_PIECES.split()), max_size=12).map(" ".join)


def _every_match(text: str) -> list[tuple[int, int, str, int]]:
    """What the scan chooses from, with no shortcut but the gates themselves: every
    pattern whose gates (each searched) and start words let it run, run from the start
    (a rule led by start words may match where its gate is not: "cliente 1 1 12")."""
    digits = _DIGIT.search(text) is not None
    return sorted(
        candidate
        for rank, rule in enumerate(_PATTERNS)
        if (digits or rule.kind in _DIGITLESS_KINDS) and rule.admits(text)
        for candidate in _matches(text, rank, rule, 0)
    )


@settings(max_examples=1500, deadline=None)
@given(_texts)
@example("respuesta 320, el 2024-03-05 a las 10:30, RR123456789ES, GB 284 1193 56")
@example("tel (555) 123-4567 o 555.123.4567, 0117 496 0321, RA 40918273, 1234-ABC")
@example("ref part 12-ab, the model X5-20, code 1234, sn AB12345, partido 4821")
@example("Serial number: WM8K-22019, SN 556677, IMEI 356938035643809")
def test_the_scan_finds_what_every_pattern_run_whole_finds(text: str) -> None:
    """The same candidates, so the same facts, kinds and labels: the digit runs drop none."""
    assert sorted(_candidates(text)) == _every_match(text)


_STARTS_BEFORE = {  # the start words of the two rules as written before, `\b` first
    "id serial": r"imei|n[uú]mero de serie|serial|s/n|\bsn\b",
    "id words": r"ticket|tiquet|invoice|factura|pedido|orde|cas|expediente|incidencia|ref"
    r"|reserva|booking|albar|tracking|seguimiento|contra|p[oó]liza|policy|cuenta|account"
    r"|\bpart(?![a-z])|pieza|recambio|\bmodel|c[oó]digo|\bcode(?![a-z])",
}


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES.lower().split(), " ", "x", "_"]), max_size=12))
@example(["apart", " ", "part", "_model", "model", "xcode", "code", "asn", "sn"])
def test_start_words_find_the_same_first_index(pieces: list[str]) -> None:
    """Each rule's start words find the first start the `\\b`-led words found."""
    text = "".join(pieces)
    now = {
        "id serial": next(r.starts for r in _PATTERNS if r.starts and "imei" in r.starts.pattern),
        "id words": next(r.starts for r in _PATTERNS if r.starts and "tiquet" in r.starts.pattern),
    }
    for name, before in _STARTS_BEFORE.items():
        old, new = re.search(before, text), now[name].search(text)  # type: ignore[union-attr]
        assert (old and old.start()) == (new and new.start()), (name, text)
