"""Build ``facts.jsonl`` for the hand-written facts_dev evaluation set.

Run from the repository root::

    python -m bench.data.facts_dev.build

Reads ``src/facts_*.txt`` next to this file (one message per line,
``ID || message || fact ;; fact ;; ...`` or ``none`` in the facts column;
lines starting with ``#`` and blank lines are ignored) and writes
``facts.jsonl`` next to this file, one JSON object per line::

    {"id": "fd-es-001", "lang": "es", "split": "fit", "text": "...", "facts": ["..."]}

Odd message numbers form the ``fit`` half, even numbers the ``held`` half.
The output is sorted by id and written with ``ensure_ascii=False``.

A :class:`FactsDataError` naming the file, line number and id is raised when
a line is malformed, an id is repeated or out of order, or a fact is not an
exact substring of its message. Uses only the standard library.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC_DIR = HERE / "src"
OUT_PATH = HERE / "facts.jsonl"

ID_RE = re.compile(r"^fd-(?P<lang>[a-z]{2})-(?P<num>\d{3})$")
FILE_RE = re.compile(r"^facts_(?P<lang>[a-z]{2})\.txt$")
NONE = "none"


class FactsDataError(ValueError):
    """A source line of the facts_dev set is invalid."""


def _fail(path: Path, lineno: int, ident: str | None, msg: str) -> None:
    where = f"{path.name}:{lineno}"
    if ident:
        where += f" ({ident})"
    raise FactsDataError(f"{where}: {msg}")


def parse_file(path: Path) -> list[dict]:
    """Parse one ``facts_<lang>.txt`` file into records, validating each line."""
    m = FILE_RE.match(path.name)
    if not m:
        raise FactsDataError(f"{path.name}: file name must look like facts_<lang>.txt")
    lang = m.group("lang")
    records: list[dict] = []
    expected = 1
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("||")
            first = parts[0].split()
            ident_guess = first[0] if first else None
            if len(parts) != 3:
                _fail(
                    path,
                    lineno,
                    ident_guess,
                    f"expected 3 fields separated by '||', found {len(parts)}",
                )
            ident, text, facts_col = (p.strip() for p in parts)
            im = ID_RE.match(ident)
            if not im:
                _fail(path, lineno, ident, "malformed id, expected fd-<lang>-NNN")
            if im.group("lang") != lang:
                _fail(path, lineno, ident, f"id language does not match file language '{lang}'")
            num = int(im.group("num"))
            if any(r["id"] == ident for r in records):
                _fail(path, lineno, ident, "id repeated")
            if num != expected:
                _fail(path, lineno, ident, f"id out of order: expected fd-{lang}-{expected:03d}")
            expected += 1
            if not text:
                _fail(path, lineno, ident, "empty message")
            if ";;" in text:
                _fail(path, lineno, ident, "message contains ';;'")
            if not facts_col:
                _fail(path, lineno, ident, "empty facts column (write 'none')")
            if facts_col == NONE:
                facts: list[str] = []
            else:
                facts = [f.strip() for f in facts_col.split(";;")]
                for fact in facts:
                    if not fact:
                        _fail(path, lineno, ident, "empty fact between ';;'")
                    if fact == NONE:
                        _fail(path, lineno, ident, "'none' mixed with other facts")
                    if fact not in text:
                        _fail(
                            path,
                            lineno,
                            ident,
                            f"fact {fact!r} is not an exact substring of the message",
                        )
                if len(set(facts)) != len(facts):
                    _fail(path, lineno, ident, "a fact is listed twice")
            records.append(
                {
                    "id": ident,
                    "lang": lang,
                    "split": "fit" if num % 2 == 1 else "held",
                    "text": text,
                    "facts": facts,
                }
            )
    return records


def build(src_dir: Path = SRC_DIR, out_path: Path = OUT_PATH) -> list[dict]:
    """Read every ``src/facts_*.txt``, validate, and write ``facts.jsonl``."""
    paths = sorted(src_dir.glob("facts_*.txt"))
    if not paths:
        raise FactsDataError(f"no facts_*.txt files in {src_dir}")
    records: list[dict] = []
    seen: set[str] = set()
    for path in paths:
        for rec in parse_file(path):
            if rec["id"] in seen:
                raise FactsDataError(f"{path.name}: id {rec['id']} repeated across files")
            seen.add(rec["id"])
            records.append(rec)
    records.sort(key=lambda r: r["id"])
    with out_path.open("w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return records


def main() -> int:
    records = build()
    n_facts = sum(len(r["facts"]) for r in records)
    n_none = sum(1 for r in records if not r["facts"])
    by_lang: dict[str, int] = {}
    for r in records:
        by_lang[r["lang"]] = by_lang.get(r["lang"], 0) + 1
    langs = ", ".join(f"{k}={v}" for k, v in sorted(by_lang.items()))
    print(
        f"wrote {OUT_PATH.name}: {len(records)} messages ({langs}), {n_none} none, {n_facts} facts"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
