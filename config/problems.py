"""What is wrong with the settings, as the user reads it: the error naming every bad
variable, and the guess at what a mistyped name meant."""

from __future__ import annotations

import difflib
from collections.abc import Mapping


class Missing(ValueError):
    """Variables that other settings need and that are not set, each with its reason."""

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name}: {why}" for name, why in problems.items()))


class SettingsInvalid(Exception):
    """Every invalid variable at once, named as the user wrote it (with its value, unless
    it is a secret)."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        lines = [f"  {name}: {why}" for name, why in self.problems.items()]
        super().__init__("invalid settings:\n" + "\n".join(lines))


def shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 80 else text[:79] + "…")


def closest(name: str, candidates: list[str]) -> str | None:
    """The candidate `name` was most likely meant as: a near spelling, else the shortest
    one it abbreviates (`window` → `window_exchanges`)."""
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if match:
        return match[0]
    longer = [c for c in candidates if len(name) >= 3 and c.startswith(name)]
    return min(longer, key=len) if longer else None
