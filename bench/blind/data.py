"""Loading and validating the blind sets: the topics format and the long single cases."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench import topics

REPO = Path(__file__).resolve().parent.parent.parent
DEFAULT_DATA = REPO / "bench" / "data" / "blind"
VARIED = "varied.jsonl"
MULTICASE = "multicase_es.jsonl"
LONGCASE = "longcase.jsonl"
# A written set split once into a fit half (read for misses) and a held half (scored in
# aggregate only) lists the held half's session and case ids here.
SPLIT = "split.json"
SPLITS = ("all", "fit", "held")

RESET_KINDS = frozenset({"closure_new", "return_new", "abrupt", "implicit"})
DISTRACTOR_KINDS = frozenset(
    {"side_question", "aside", "thanks", "other_domain", "return_same", "update", "status"}
)
CONTINUE_KINDS = DISTRACTOR_KINDS | {"followup"}
DISTRACTOR_SCALE = 328  # issue 28: at most 1 false reset over 328 distractors


class BlindDataError(ValueError):
    """A blind data file that is not in the shape the bench scores."""


# ---------------------------------------------------------------- loading and validation


def held_ids(folder: Path) -> frozenset[str] | None:
    """The ids of `folder`'s held half (`split.json`), or None for a set not split."""
    path = folder / SPLIT
    if not path.exists():
        return None
    held = json.loads(path.read_text(encoding="utf-8")).get("held")
    if not isinstance(held, list) or not all(isinstance(i, str) for i in held):
        raise BlindDataError(f"{path.name}: 'held' must be a list of ids")
    return frozenset(held)


def in_split(item_id: str, held: frozenset[str] | None, split: str) -> bool:
    """Whether the session or case `item_id` is in `split` ("all", "fit" or "held")."""
    if split == "all":
        return True
    if held is None:
        raise BlindDataError(f"no {SPLIT}: this set has no {split} half")
    return (item_id in held) == (split == "held")


def _rows(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    if not path.exists():
        raise BlindDataError(f"{path}: not found")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BlindDataError(f"{path.name}:{n}: not JSON ({exc.msg})") from exc
        if not isinstance(raw, dict):
            raise BlindDataError(f"{path.name}:{n}: not a JSON object")
        yield n, raw


def _headed(path: Path) -> Iterable[tuple[str, str, str, dict[str, object]]]:
    """Each row as (where, id, lang, row): an id not seen before and a known language,
    or BlindDataError naming the line."""
    seen: set[str] = set()
    for n, raw in _rows(path):
        row_id = _text(f"{path.name}:{n}", raw.get("id"), "id")
        where = f"{path.name}:{n} ({row_id})"
        if row_id in seen:
            raise BlindDataError(f"{where}: duplicate id")
        seen.add(row_id)
        lang = raw.get("lang")
        if lang not in ("es", "en"):
            raise BlindDataError(f"{where}: lang must be 'es' or 'en'")
        yield where, row_id, str(lang), raw


def _text(where: str, value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BlindDataError(f"{where}: {field} must be a non-empty string")
    return value


def _when(where: str, value: object) -> datetime:
    try:
        return datetime.fromisoformat(_text(where, value, "ts"))
    except ValueError as exc:
        raise BlindDataError(f"{where}: ts {value!r} is not ISO-8601") from exc


def validate_topic_file(path: Path, split: str | None = "blind") -> None:
    """Raise BlindDataError unless every line is a session of the topics format with a
    `start` first, then `continue`/`reset` of known kinds, in time order (and, unless
    `split` is None, of that split)."""
    count = 0
    for where, _sid, _lang, raw in _headed(path):
        if split is not None and raw.get("split") != split:
            raise BlindDataError(f"{where}: split must be {split!r}")
        exchanges = raw.get("exchanges")
        if not isinstance(exchanges, list) or len(exchanges) < 2:
            raise BlindDataError(f"{where}: exchanges must be a list of 2 or more")
        last: datetime | None = None
        for i, ex in enumerate(exchanges):
            at = f"{where} exchange {i}"
            if not isinstance(ex, dict):
                raise BlindDataError(f"{at}: not an object")
            _text(at, ex.get("user"), "user")
            _text(at, ex.get("assistant"), "assistant")
            ts = _when(at, ex.get("ts"))
            if last is not None and ts < last:
                raise BlindDataError(f"{at}: ts goes back in time")
            last = ts
            label, kind = ex.get("label"), ex.get("kind")
            if i == 0:
                if label != "start":
                    raise BlindDataError(f"{at}: the first label must be 'start'")
            elif label == "reset":
                if kind not in RESET_KINDS:
                    raise BlindDataError(f"{at}: reset kind {kind!r} not in {sorted(RESET_KINDS)}")
            elif label == "continue":
                if kind not in CONTINUE_KINDS:
                    raise BlindDataError(
                        f"{at}: continue kind {kind!r} not in {sorted(CONTINUE_KINDS)}"
                    )
            else:
                raise BlindDataError(f"{at}: label {label!r} must be 'continue' or 'reset'")
        count += 1
    if not count:
        raise BlindDataError(f"{path.name}: no sessions")


def load_topic_set(path: Path, split: str | None = "blind") -> list[topics.Session]:
    validate_topic_file(path, split)
    return topics.load(path)


@dataclass(frozen=True, slots=True)
class LongCase:
    id: str
    lang: str
    facts: tuple[str, ...]
    turns: tuple[dict[str, str], ...]  # {"role", "content", "ts"}, user first, alternating

    @property
    def user_turns(self) -> int:
        return sum(t["role"] == "user" for t in self.turns)


def load_long_cases(path: Path) -> list[LongCase]:
    """The long single-case sessions; BlindDataError unless user and assistant alternate
    (an assistant after every user), times are ISO-8601 in order, and every planted fact
    is said verbatim in some user message."""
    cases: list[LongCase] = []
    for where, cid, lang, raw in _headed(path):
        facts, turns = raw.get("facts"), raw.get("turns")
        if not isinstance(facts, list) or not facts:
            raise BlindDataError(f"{where}: facts must be a non-empty list")
        if not isinstance(turns, list) or len(turns) < 2 or len(turns) % 2:
            raise BlindDataError(f"{where}: turns must be user/assistant pairs")
        clean: list[dict[str, str]] = []
        last: datetime | None = None
        for i, turn in enumerate(turns):
            at = f"{where} turn {i}"
            if not isinstance(turn, dict):
                raise BlindDataError(f"{at}: not an object")
            role = "user" if i % 2 == 0 else "assistant"
            if turn.get("role") != role:
                raise BlindDataError(f"{at}: expected role {role!r}, got {turn.get('role')!r}")
            content = _text(at, turn.get("content"), "content")
            ts = _when(at, turn.get("ts"))
            if last is not None and ts < last:
                raise BlindDataError(f"{at}: ts goes back in time")
            last = ts
            clean.append({"role": role, "content": content, "ts": str(turn["ts"])})
        said = [t["content"] for t in clean if t["role"] == "user"]
        for fact in facts:
            text = _text(where, fact, "a fact")
            if not any(text in message for message in said):
                raise BlindDataError(f"{where}: a planted fact is in no user message verbatim")
        if len(set(facts)) != len(facts):
            raise BlindDataError(f"{where}: a planted fact is listed twice")
        cases.append(LongCase(cid, lang, tuple(str(f) for f in facts), tuple(clean)))
    if not cases:
        raise BlindDataError(f"{path.name}: no cases")
    return cases
