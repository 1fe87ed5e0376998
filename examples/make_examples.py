"""Writes the example transcripts next to this file, deterministically (seeded).

    python examples/make_examples.py

`soporte_es.jsonl`: one long Spanish support conversation (a laptop with a flickering
screen: order, ticket, troubleshooting, technician, RMA, replacement; then a different
case: a wrong invoice, a refund, a company invoice). `support_en.jsonl`: an English router
case that turns into a move and a plan change, interleaved with a second, short customer.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Chat:
    """Builds transcript lines with plausible times: minutes between turns, days apart."""

    def __init__(self, session: str, start: datetime, seed: int) -> None:
        self.session = session
        self.at = start
        self.rng = random.Random(seed)
        self.lines: list[dict[str, str]] = []
        self.turns = 0

    def say(self, user: str, bot: str) -> None:
        self.at += timedelta(minutes=self.rng.randint(1, 6), seconds=self.rng.randint(0, 59))
        self._line("user", user)
        self.at += timedelta(seconds=self.rng.randint(20, 90))
        self._line("assistant", bot)
        self.turns += 1

    def later(self, days: int, hour: int) -> None:
        """Jump to `hour` o'clock `days` later (the next day if that is not later)."""
        then = (self.at + timedelta(days=days)).replace(hour=hour, minute=self.rng.randint(0, 50))
        self.at = then if then > self.at else then + timedelta(days=1)

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def _line(self, role: str, content: str) -> None:
        self.lines.append(
            {"role": role, "content": content, "ts": self.at.isoformat(), "session": self.session}
        )


def write(path: Path, lines: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def interleave(*chats: Chat) -> list[dict[str, str]]:
    """Lines of several chats in time order, each user line kept next to its reply."""
    pairs = [
        (c.lines[i]["ts"], c.lines[i : i + 2]) for c in chats for i in range(0, len(c.lines), 2)
    ]
    return [line for _, pair in sorted(pairs, key=lambda p: p[0]) for line in pair]


if __name__ == "__main__":
    from spanish import soporte_es  # noqa: I001 - local modules next to this script
    from english import support_en

    es = soporte_es(Chat("soporte-es", datetime(2025, 3, 11, 9, 12, tzinfo=UTC), 48213))
    write(HERE / "soporte_es.jsonl", es.lines)
    alex, priya = support_en(
        Chat("alex", datetime(2025, 6, 9, 15, 3, tzinfo=UTC), 7781),
        Chat("priya", datetime(2025, 6, 9, 15, 20, tzinfo=UTC), 1190),
    )
    write(HERE / "support_en.jsonl", interleave(alex, priya))
    print(f"soporte_es.jsonl: {es.turns} turns; support_en.jsonl: {alex.turns} + {priya.turns}")
