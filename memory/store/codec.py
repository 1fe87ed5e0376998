"""`PreviousCase` as the stores keep it: one JSON text with the new episode's row."""

from __future__ import annotations

import json

from memory.types import PreviousCase


def encode(case: PreviousCase | None) -> str | None:
    if case is None:
        return None
    data = {
        "episode": case.episode_id,
        "facts": [list(pair) for pair in case.facts],
        "terms": list(case.terms),
        "question": case.question,
        "words": list(case.words),
    }
    return json.dumps(data, ensure_ascii=False)


def decode(raw: str | None) -> PreviousCase | None:
    if not raw:
        return None
    data = json.loads(raw)
    return PreviousCase(
        int(data["episode"]),
        tuple((str(k), str(v)) for k, v in data.get("facts", ())),
        tuple(str(t) for t in data.get("terms", ())),
        str(data.get("question", "")),
        tuple(str(w) for w in data.get("words", ())),  # none in a case kept before words
    )
