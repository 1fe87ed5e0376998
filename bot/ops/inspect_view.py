"""`ventana inspect KEY`: what is stored for a key and what the next request would carry.

`collect` builds one JSON-able dict (the stable `--json` form) from the store's export, read
once into typed rows (`stored`), and the engine's `preview` of the next request (token
counts as the engine's budgets count them); `render` draws the same data with rich.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.ops.inspect_rows import EpisodeRow, ExchangeRow, SummaryRow, stored
from bot.terminal import visible
from config.settings import Settings
from memory.carry_over import carry_over_block
from memory.engine import MemoryEngine
from memory.soft_reset.block import InPlay
from memory.soft_reset.turn import case_carry
from memory.store import Store
from memory.types import Exchange, TurnState

FORMAT = 1
CLIP = 90
DIGEST_CHARS = 100  # a reset's signals in the episodes table (`--json` has them all)
JSON_COLUMNS = (
    "topic", "reset_signals", "replies", "dropped_facts", "carry_over", "previous_case"
)  # fmt: skip
PARTS = ("system", "summary", "carry_over", "pending", "window")  # of a request, no message


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
    previous = _previous_case(state, seen.soft, settings, engine)
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
            "previous_case": previous,
            "pending": [_exchange(x) for x in state.pending],
            "window": [_exchange(x) for x in state.window],
        },
        "resets_reverted": [r for r in map(_reverted, exchanges) if r],
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


def _previous_case(
    state: TurnState, soft: InPlay | None, settings: Settings, engine: MemoryEngine
) -> dict[str, Any] | None:
    """The case the automatic reset that opened the current episode closed: its facts,
    whether it rides in the next request even before any message (`in_play`, as the
    engine's preview decided: the reset is recent, or the window names one of its facts)
    and that block."""
    case = state.episode.previous
    if case is None:
        return None
    count, budget = engine.tokenizer.count, settings.context_tokens
    block = case_carry(state, soft, settings.language, count, budget)
    return {
        "episode": case.episode_id,
        "facts": [list(pair) for pair in case.facts],
        "terms": len(case.terms),
        "question": case.question or None,
        "in_play": soft,
        "block": block or None,
    }


def _reverted(row: ExchangeRow) -> dict[str, Any] | None:
    """An exchange whose message took an automatic reset back, with why; else None."""
    topic = row.topic
    if not isinstance(topic, dict) or topic.get("reason") != "reset_reverted":
        return None
    signals = topic.get("signals") or {}
    return {
        "exchange": row.id,
        "episode": row.episode_id,
        "created_at": row.created_at,
        "reason": signals.get("reset_revert_reason"),
        "shared": signals.get("reset_revert_shared") or [],
        "reverted_episode": signals.get("reverted_episode"),
        "user": row.user_text,
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
        "previous_case": row.previous_case,
        "reopened_at": row.reopened_at,
        "resets_reverted": sum(1 for x in own if _reverted(x)),
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


def shown(text: str) -> Text:
    """Stored text as plain Text: data, never Rich markup (`[/]`, `[bracketed]`) nor a
    terminal's control sequence (ESC is shown as `\\x1b`)."""
    return Text(visible(text))


def row(out: Table, *cells: str) -> None:
    """A row of `shown` cells."""
    out.add_row(*map(shown, cells))


def render(data: dict[str, Any], console: Console) -> None:
    s = data["session"]
    console.print(
        Panel.fit(
            f"last activity {s['last_activity'] or '-'} · created {s['created_at']} · "
            f"debug {'on' if s['debug'] else 'off'} · current episode {s['current_episode']}",
            title=f"[b]{escape(visible(data['key']))}[/b]",
        )
    )
    console.print(_episodes_table(data["episodes"]))
    console.print(_summaries_table(data["episodes"]))
    cur = data["current"]
    for name in ("pending", "window"):
        console.print(_exchanges_table(f"{name} ({len(cur[name])})", cur[name]))
    if cur["summary"]:
        title = f"summary v{cur['summary_version']} · checkpoint #{cur['checkpoint']}"
        console.print(Panel.fit(shown(cur["summary"]), title=title))
    if cur["carry_over_block"]:
        spent = data["tokens"]["next_request_without_message"]["carry_over"]
        title = f"carried over by the reset · {spent} tokens"
        console.print(Panel.fit(shown(cur["carry_over_block"]), title=title))
    previous = cur["previous_case"]
    if previous and previous["block"]:
        title = f"previous case (episode {previous['episode']}) · in play: {previous['in_play']}"
        console.print(Panel.fit(shown(previous["block"]), title=title))
    if data["resets_reverted"]:
        console.print(_reverted_table(data["resets_reverted"]))
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
        signals = signal_digest(e["signals"]) if e["signals"] else ""
        row(out, str(e["id"]), e["began"], e["reason"] or "", e["started_at"][:19],
            (e["closed_at"] or "open")[:19], str(e["exchanges"]), str(e["noise"]),
            signals)  # fmt: skip
    return out


def signal_digest(signals: Any, limit: int = DIGEST_CHARS) -> str:
    """What decided a reset, in a line a table can hold: the model's probability against
    its threshold and the features that pushed, or the readings that were set; `--json`
    keeps every signal."""
    if not isinstance(signals, dict):
        return json.dumps(signals, ensure_ascii=False)[:limit]
    parts = []
    if "p" in signals:
        parts.append(f"p {signals['p']} (bar {signals.get('threshold', '?')})")
        top = signals.get("top_features") or []
        parts += [str(f[0]) for f in top if isinstance(f, list) and f]
    else:
        parts += [k for k, v in signals.items() if v is True or (isinstance(v, list) and v)]
    text = ", ".join(parts) or json.dumps(signals, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reverted_table(rows: list[dict[str, Any]]) -> Table:
    out = table(f"resets reverted ({len(rows)})", "exchange", "episode", "reason", "shared",
                "undone episode", "user")  # fmt: skip
    for x in rows:
        row(out, f"#{x['exchange']}", str(x["episode"]), str(x["reason"]),
            clip(", ".join(map(str, x["shared"])), 40), str(x["reverted_episode"]),
            clip(x["user"], 50))  # fmt: skip
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
