"""The rows of a key's export that `ventana inspect` reads, typed: the one place that
reads the export's dicts by column name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SessionRow:
    created_at: str
    last_activity_at: str | None
    debug: bool


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    id: int
    started_at: str
    closed_at: str | None
    opened_by: str | None
    reset_signals: Any
    carry_over: Any
    previous_case: Any = None
    reopened_at: str | None = None


@dataclass(frozen=True, slots=True)
class ExchangeRow:
    id: int
    episode_id: int
    signal: bool
    noise_reason: str | None
    created_at: str
    user_text: str
    reply_text: str
    prompt_tokens: int
    reply_tokens: int
    topic: Any = None  # the turn's topic decision (a revert says so here)


@dataclass(frozen=True, slots=True)
class SummaryRow:
    episode_id: int
    text: str
    fields: dict[str, Any]  # the version facts inspect lists, by name (`SUMMARY_FIELDS`)


SUMMARY_FIELDS = ("version", "checkpoint", "prompt_version", "model", "source_from",
                  "source_to", "input_tokens", "output_tokens", "round", "created_at",
                  "dropped_facts")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Stored:
    """The rows of a key's export that inspect reads, typed: the one place that reads the
    export's dicts by column name."""

    session: SessionRow
    episodes: tuple[EpisodeRow, ...]
    exchanges: tuple[ExchangeRow, ...]
    summaries: tuple[SummaryRow, ...]


def stored(data: dict[str, Any]) -> Stored:
    """Typed rows from `export_key`'s data."""
    s = data["session"]
    return Stored(
        SessionRow(s["created_at"], s["last_activity_at"], bool(s["debug"])),
        tuple(_episode_row(e) for e in data["episodes"]),
        tuple(_exchange_row(x) for x in data["exchanges"]),
        tuple(
            SummaryRow(v["episode_id"], v["text"], {name: v.get(name) for name in SUMMARY_FIELDS})
            for v in data["summaries"]
        ),
    )


def _episode_row(e: dict[str, Any]) -> EpisodeRow:
    signals, carry = e.get("reset_signals"), e.get("carry_over")
    return EpisodeRow(
        e["id"], e["started_at"], e["closed_at"], e.get("opened_by"), signals, carry,
        e.get("previous_case"), e.get("reopened_at"),
    )  # fmt: skip


def _exchange_row(x: dict[str, Any]) -> ExchangeRow:
    tokens = int(x["prompt_tokens"] or 0), int(x["reply_tokens"] or 0)
    return ExchangeRow(
        x["id"], x["episode_id"], bool(x["signal"]), x["noise_reason"], x["created_at"],
        x["user_text"], x["reply_text"], *tokens, x.get("topic"),
    )  # fmt: skip
