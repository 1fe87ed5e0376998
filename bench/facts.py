"""The fact guard on written messages: how many planted details its key-fact lines keep.

    python -m bench.facts [--data DIR] [--split fit|held|all] [--misses] [--quick]

A detail a user gave long ago reaches the model, whatever the summary model dropped,
through the key-facts section the fold's guard writes (`memory.fold.keyfacts`): one line
per salient fact of the folded text (`salient_facts`, each line `render_fact`). This
bench asks that one question message by message, on `bench/data/facts_dev/`
(hand-written support messages, each with the details a support agent would note down,
written by a helper that saw no product code; its README):

- **kept**: the planted detail appears verbatim in the message's key-fact lines;
- **read otherwise**: not verbatim, but a fact the extractor found overlaps it (another
  boundary or a normalised form: "el 14/03" planted as "14/03" is kept; "15 %" found as
  "15%" is read otherwise);
- **missed**: no fact overlaps it;
- **extra facts**: key-fact lines that overlap no planted detail, on messages with
  details and on those without any (`none`): what the section spends on noise.

The long-case replays (`python -m bench.blind --data …`) measure the whole path (window,
summary, cap); this one isolates the extractor and the salience rule, at 2,000 messages a
second. `--misses` prints what the fit half missed; the held half is scored in aggregate
only and its misses are never printed (the set's README: fit on one half, score the other).

`--data` may also name a folder of long cases (`longcase.jsonl`, `bench.blind`'s format:
`bench/data/support_dev2`, the blind folder): each user message is an item with the
case's planted facts it says. A set split into halves (its `split.json`: support_dev2,
support_dev4, support_dev5) has its fit half's cases fit and its held half's held; in any
other all of them are held (aggregate figures only, no misses).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.blind.data import SPLITS, BlindDataError, held_ids, load_long_cases
from bench.common import Target
from memory.facts import facts_of
from memory.fold.inwords import USER, KeyFactLines
from memory.fold.keyfacts import salient_facts

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "facts_dev"


class FactsDataError(ValueError):
    """The set is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    lang: str
    split: str
    text: str
    facts: tuple[str, ...]


@dataclass(slots=True)
class Score:
    messages: int = 0
    planted: int = 0
    kept: int = 0
    read_otherwise: int = 0
    missed: int = 0
    empty_messages: int = 0  # messages with no planted detail
    extra_on_empty: int = 0  # key-fact lines there
    extra_lines: int = 0  # key-fact lines overlapping no planted detail, elsewhere
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (id, fact, how)

    @property
    def kept_share(self) -> float:
        return self.kept / self.planted if self.planted else 0.0

    def add(self, other: Score) -> None:
        for name in (
            "messages", "planted", "kept", "read_otherwise", "missed", "empty_messages",
            "extra_on_empty", "extra_lines",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses += other.misses


def load(folder: Path) -> list[Item]:
    """The set's `facts.jsonl` (its `build.py` writes it from the hand-written sources),
    or its long cases' user messages (`long_items`)."""
    path = folder / "facts.jsonl"
    if not path.exists() and (folder / "longcase.jsonl").exists():
        return long_items(folder / "longcase.jsonl", held_ids(folder))
    if not path.exists():
        raise FactsDataError(f"{path}: not found (build it: python -m bench.data.facts_dev.build)")
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item = Item(
                str(row["id"]), str(row["lang"]), str(row["split"]), str(row["text"]),
                tuple(str(f) for f in row["facts"]),
            )  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise FactsDataError(f"{path}:{number}: {exc}") from exc
        if item.split not in ("fit", "held"):
            raise FactsDataError(f"{path}:{number}: split {item.split!r} is not fit or held")
        missing = [f for f in item.facts if f not in item.text]
        if missing:
            raise FactsDataError(f"{path}:{number}: {missing} not in the message")
        items.append(item)
    return items


def long_items(path: Path, held: frozenset[str] | None = None) -> list[Item]:
    """Each user message of the long cases at `path`, with the planted facts it says
    verbatim; held (scored in aggregate only) unless `held` names the set's held half,
    and its case is not in it."""
    try:
        cases = load_long_cases(path)
    except BlindDataError as exc:
        raise FactsDataError(str(exc)) from exc
    return [
        Item(
            f"{case.id}-{n:03d}",
            case.lang,
            "fit" if held is not None and case.id not in held else "held",
            turn["content"],
            tuple(f for f in case.facts if f in turn["content"]),
        )
        for case in cases
        for n, turn in enumerate(case.turns)
        if turn["role"] == "user"
    ]


def key_fact_lines(text: str, language: str = "es") -> list[str]:
    """The key-fact lines the guard would write for `text` alone, in a `language` chat:
    each fact in the words `text` gave it, as the user's (`KeyFactLines`)."""
    return KeyFactLines([(text, USER)], language).lines(salient_facts(text))


def _overlaps(a: str, b: str) -> bool:
    a, b = a.casefold(), b.casefold()
    return a in b or b in a


def score_item(item: Item) -> Score:
    lines = key_fact_lines(item.text, item.lang)
    section = "\n".join(lines)
    found = [f.value for f in facts_of(item.text)]
    s = Score(messages=1, planted=len(item.facts), empty_messages=int(not item.facts))
    for fact in item.facts:
        if fact in section:
            s.kept += 1
        elif any(_overlaps(fact, value) for value in found):
            s.read_otherwise += 1
            s.misses.append((item.id, fact, "read otherwise"))
        else:
            s.missed += 1
            s.misses.append((item.id, fact, "missed"))
    extra = sum(not any(_overlaps(f, line) for f in item.facts) for line in lines)
    if item.facts:
        s.extra_lines += extra
    else:
        s.extra_on_empty += extra
    return s


def score(items: Sequence[Item]) -> Score:
    total = Score()
    for item in items:
        total.add(score_item(item))
    return total


def _line(title: str, s: Score) -> str:
    return (
        f"  {title:<14} messages {s.messages:4}  details {s.planted:4}  kept {s.kept:4} "
        f"({s.kept_share:.1%})  read otherwise {s.read_otherwise:3}  missed {s.missed:3}  "
        f"extra lines {s.extra_lines:3}, on {s.empty_messages} messages without details "
        f"{s.extra_on_empty:3}"
    )


def main(argv: Sequence[str] | None = None) -> list[Target]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=SPLITS, default="all")
    parser.add_argument("--misses", action="store_true", help="print the fit half's misses")
    parser.add_argument("--quick", action="store_true", help="the same run (it takes a second)")
    args = parser.parse_args(argv)
    if args.misses and args.split != "fit":
        parser.error("--misses prints the fit half's misses only: add --split fit")
    try:
        items = load(args.data)
    except FactsDataError as exc:
        print(f"== facts: {exc}")
        return []
    present = [split for split in ("fit", "held") if any(i.split == split for i in items)]
    splits = present if args.split == "all" else [args.split]
    print(f"== facts: the fact guard's key-fact lines on {args.data.name} ({len(items)} messages)")
    scores: dict[str, Score] = {}
    for split in splits:
        for lang in sorted({i.lang for i in items}):
            chosen = [i for i in items if i.split == split and i.lang == lang]
            print(_line(f"{split} {lang}", score(chosen)))
        scores[split] = score([i for i in items if i.split == split])
        print(_line(f"{split}", scores[split]))
    if args.misses:
        for item_id, fact, how in scores["fit"].misses:
            text = next(i.text for i in items if i.id == item_id)
            print(f"    {item_id} {how}: {fact!r}  in  {text!r}")
    return []  # printed figures only: issue 28 sets no target for this one


if __name__ == "__main__":
    main()
