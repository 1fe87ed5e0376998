"""`ventana inspect KEY`: what is stored for a key and what the next request would carry.

`collect` builds one JSON-able dict (the stable `--json` form) from the store's export, read
once into typed rows (`stored`), and the engine's `preview` of the next request (token
counts as the engine's budgets count them); `render` draws the same data with rich.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from config.settings import Settings
from memory.carry_over import carry_over_block
from memory.engine import MemoryEngine
from memory.store import Store
from memory.types import Exchange

FORMAT = 1
CLIP = 90
JSON_COLUMNS = ("topic", "reset_signals", "replies", "dropped_facts", "carry_over")
PARTS = ("system", "summary", "carry_over", "pending", "window")  # of a request, no message


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
    return EpisodeRow(e["id"], e["started_at"], e["closed_at"], e.get("opened_by"), signals, carry)


def _exchange_row(x: dict[str, Any]) -> ExchangeRow:
    tokens = int(x["prompt_tokens"] or 0), int(x["reply_tokens"] or 0)
    return ExchangeRow(
        x["id"], x["episode_id"], bool(x["signal"]), x["noise_reason"], x["created_at"],
        x["user_text"], x["reply_text"], *tokens,
    )  # fmt: skip


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    """Columns that hold JSON text, decoded (the data is the same, easier to read)."""
    out = dict(row)
    for name in JSON_COLUMNS:
        if isinstance(out.get(name), str):
            with contextlib.suppress(json.JSONDecodeError):
                out[name] = json.loads(out[name])
    return out


async def export_key(store: Store, key: str) -> dict[str, Any] | None:
    """Everything stored for `key` (decoded JSON columns), or None for an unknown key."""
    raw = await store.export(key)
    if not raw.get("session"):
        return None
    out: dict[str, Any] = {"format": FORMAT, "key": key}
    for name, value in raw.items():
        if isinstance(value, list):
            out[name] = [decode_row(r) for r in value]
        elif isinstance(value, dict):
            out[name] = decode_row(value)
    return out


async def collect(
    store: Store, engine: MemoryEngine, key: str, settings: Settings
) -> dict[str, Any] | None:
    """The inspect data of `key`; the next request is the engine's own preview of it."""
    data = await export_key(store, key)
    if data is None or await store.peek_state(key, settings.window_exchanges) is None:
        return None
    rows = stored(data)
    seen = await engine.preview(key)
    state, exchanges = seen.state, rows.exchanges
    carry = carry_over_block(state.episode.carry_over, settings.language)
    tokens = {part: seen.as_is.tokens.get(part, 0) for part in PARTS}
    tokens["total"] = sum(tokens.values())
    indexed, index_bytes = await store.recall_index_size(key)
    sent = [x.prompt_tokens for x in exchanges if x.prompt_tokens]
    return {
        "format": FORMAT,
        "key": key,
        "session": {
            "created_at": rows.session.created_at,
            "last_activity": rows.session.last_activity_at,
            "debug": rows.session.debug,
            "current_episode": state.episode.id,
        },
        "episodes": [_episode(e, exchanges, rows.summaries) for e in rows.episodes],
        "current": {
            "episode": state.episode.id,
            "checkpoint": state.summary.checkpoint if state.summary else 0,
            "summary_version": state.summary.version if state.summary else None,
            "summary": state.summary.text if state.summary else None,
            "carry_over": [list(pair) for pair in state.episode.carry_over],
            "carry_over_block": carry or None,
            "pending": [_exchange(x) for x in state.pending],
            "window": [_exchange(x) for x in state.window],
        },
        "noise": [_noise(x) for x in exchanges if not x.signal],
        "recall_index": {"exchanges": indexed, "bytes_all_keys": index_bytes},
        "tokens": {
            "tokenizer": engine.tokenizer.name,
            "budget": settings.context_tokens,
            "next_request_without_message": tokens,
            "stored_prompt_tokens_total": sum(sent),
            "last_prompt_tokens": sent[-1] if sent else 0,
            "max_prompt_tokens": max(sent, default=0),
            "reply_tokens_total": sum(x.reply_tokens for x in exchanges),
        },
    }


def _episode(
    row: EpisodeRow, exchanges: tuple[ExchangeRow, ...], summaries: tuple[SummaryRow, ...]
) -> dict[str, Any]:
    began, _, reason = (row.opened_by or "first").partition(":")
    own = [x for x in exchanges if x.episode_id == row.id]
    return {
        "id": row.id,
        "started_at": row.started_at,
        "closed_at": row.closed_at,
        "began": began,  # first | manual | auto
        "reason": reason or None,
        "signals": row.reset_signals,
        "carry_over": row.carry_over or [],
        "exchanges": len(own),
        "noise": sum(1 for x in own if not x.signal),
        "summaries": [_summary(s) for s in summaries if s.episode_id == row.id],
    }


def _summary(row: SummaryRow) -> dict[str, Any]:
    return row.fields | {"chars": len(row.text)}


def _exchange(ex: Exchange) -> dict[str, Any]:
    at = ex.created_at.isoformat() if ex.created_at else None
    return {"id": ex.id, "user": ex.user_text, "assistant": ex.reply_text, "created_at": at}


def _noise(row: ExchangeRow) -> dict[str, Any]:
    return {"id": row.id, "episode": row.episode_id, "reason": row.noise_reason,
            "created_at": row.created_at, "user": row.user_text,
            "assistant": row.reply_text}  # fmt: skip


# -- terminal view ----------------------------------------------------------------------------


def clip(text: str | None, width: int = CLIP) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def terminal(console: Console | None = None) -> Console:
    """A console for our tables: a terminal's own width, or no width limit when piped, so
    keys and reasons are never cut at 80 columns."""
    probe = console or Console()
    return probe if probe.is_terminal else Console(width=100_000, soft_wrap=True)


def table(title: str, *columns: str, **kw: Any) -> Table:
    """A table whose cells fold long words onto the next line instead of cutting them."""
    out = Table(title=title, title_justify="left", **kw)
    for col in columns:
        out.add_column(col, overflow="fold")
    return out


def row(out: Table, *cells: str) -> None:
    """Cells as plain Text: user text is data, never Rich markup (`[/]`, `[bracketed]`)."""
    out.add_row(*(Text(cell) for cell in cells))


def render(data: dict[str, Any], console: Console) -> None:
    s = data["session"]
    console.print(
        Panel.fit(
            f"last activity {s['last_activity'] or '-'} · created {s['created_at']} · "
            f"debug {'on' if s['debug'] else 'off'} · current episode {s['current_episode']}",
            title=f"[b]{escape(data['key'])}[/b]",
        )
    )
    console.print(_episodes_table(data["episodes"]))
    console.print(_summaries_table(data["episodes"]))
    cur = data["current"]
    for name in ("pending", "window"):
        console.print(_exchanges_table(f"{name} ({len(cur[name])})", cur[name]))
    if cur["summary"]:
        title = f"summary v{cur['summary_version']} · checkpoint #{cur['checkpoint']}"
        console.print(Panel.fit(Text(cur["summary"]), title=title))
    if cur["carry_over_block"]:
        spent = data["tokens"]["next_request_without_message"]["carry_over"]
        title = f"carried over by the reset · {spent} tokens"
        console.print(Panel.fit(Text(cur["carry_over_block"]), title=title))
    if data["noise"]:
        console.print(_noise_table(data["noise"]))
    console.print(_tokens_table(data["tokens"]))
    idx = data["recall_index"]
    console.print(
        f"recall index: {idx['exchanges']:,} exchanges of this key · "
        f"{idx['bytes_all_keys']:,} bytes (all keys)"
    )


def _episodes_table(episodes: list[dict[str, Any]]) -> Table:
    out = table("episodes", "id", "began", "reason", "started", "closed", "exchanges", "noise",
                "signals")  # fmt: skip
    for e in episodes:
        signals = json.dumps(e["signals"], ensure_ascii=False) if e["signals"] else ""
        row(out, str(e["id"]), e["began"], e["reason"] or "", e["started_at"][:19],
            (e["closed_at"] or "open")[:19], str(e["exchanges"]), str(e["noise"]),
            signals)  # fmt: skip
    return out


def _summaries_table(episodes: list[dict[str, Any]]) -> Table:
    out = table("summary versions", "episode", "v", "checkpoint", "prompt", "model", "source",
                "in/out tok", "round", "dropped")  # fmt: skip
    for e in episodes:
        for v in e["summaries"]:
            row(out, str(e["id"]), str(v["version"]), f"#{v['checkpoint']}",
                str(v["prompt_version"]), str(v["model"]),
                f"#{v['source_from']}–#{v['source_to']}",
                f"{v['input_tokens']}/{v['output_tokens']}", str(v["round"]),
                str(len(v["dropped_facts"] or [])))  # fmt: skip
    return out


def _exchanges_table(title: str, rows: list[dict[str, Any]]) -> Table:
    out = table(title, "id", "user", "assistant")
    for x in rows:
        row(out, f"#{x['id']}", clip(x["user"]), clip(x["assistant"]))
    return out


def _noise_table(rows: list[dict[str, Any]]) -> Table:
    out = table(f"noise ({len(rows)}), stored but never sent", "id", "episode", "reason",
                "user", "reply")  # fmt: skip
    for x in rows:
        row(out, f"#{x['id']}", str(x["episode"]), x["reason"] or "", clip(x["user"], 50),
            clip(x["assistant"], 50))  # fmt: skip
    return out


def _tokens_table(tokens: dict[str, Any]) -> Group:
    nxt = tokens["next_request_without_message"]
    out = Table(title=f"tokens ({escape(tokens['tokenizer'])})", title_justify="left")
    out.add_column("part")
    out.add_column("tokens", justify="right")
    for part in ("system", "summary", "pending", "window", "total"):
        out.add_row(part, f"{nxt[part]:,}")
    out.add_row("budget", f"{tokens['budget']:,}")
    note = (
        f"stored requests: total {tokens['stored_prompt_tokens_total']:,}, last "
        f"{tokens['last_prompt_tokens']:,}, max {tokens['max_prompt_tokens']:,}; replies "
        f"{tokens['reply_tokens_total']:,}"
    )
    return Group(out, Text(note))
