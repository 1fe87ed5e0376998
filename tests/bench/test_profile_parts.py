"""bench.profile.parts times the event loop's parts of a turn and digests what they
decided, the same on every run of the same turns."""

from __future__ import annotations

from bench.profile import parts


async def test_parts_are_timed_and_the_same_turns_decide_the_same() -> None:
    """Every turn has its topic check and plan timed, every search its hits recorded;
    two runs of the same turns give the same decisions and hits."""
    cpu, spent, seen = await parts.run(chats=2, turns=4)
    assert cpu > 0
    assert len(spent["topic"]) == len(spent["plan"]) == 8 == len(seen["decisions"])
    assert len(spent["search"]) == len(seen["hits"]) == len(spent["query"])
    _, _, again = await parts.run(chats=2, turns=4)
    assert parts.digest(again["decisions"]) == parts.digest(seen["decisions"])
    assert parts.digest(again["hits"]) == parts.digest(seen["hits"])
