"""`ventana replay`: a transcript through the real pipeline, with a token report.

Every user line becomes one `Inbound` handled by the same `ConversationHandler` every
channel uses, on a temporary database. An assistant line right after a user line (same
session) is that turn's reply, given by a scripted model; other turns go to the configured
chat model. Background folds are drained after each turn, so a replay is deterministic
and each fold is counted in the turn that caused it. The engine's clock follows the
transcript's `ts`, so idle resets replay too.

A user line with `"probe": true` is a dry run at that point of its session: the engine
prepares it exactly like a real turn (topic check, recall, budget) with `dry_run=True`,
so no model is called and nothing is stored; it is reported and written to the contexts
with `"probe": true`, left out of the totals, and does not move the transcript's clock.

A turn that calls no model (a command, a debug dry run, a message too large) still gets a
report entry (`prompt_tokens` 0, `model_called` false) and a context line holding only the
user message, with an empty system and `"model_called": false`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.app import App, build_models
from bot.conversation.inbound import Inbound
from bot.ops.probes import dry_run, revert_reason
from config.settings import Settings
from memory.engine import Outcome, Prepared
from memory.policy import Assembly, memory_block
from memory.tokens import Tokenizer, count_messages, default_tokenizer
from memory.types import Exchange, SessionKey
from providers.base import ChatModel, ChatReply, ChatRequest, Message, Usage

DEFAULT_SESSION = "default"
FIRST_TS = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # when the transcript gives no times
STEP = timedelta(minutes=1)
Progress = Callable[[int, int], None]


class TranscriptError(ValueError):
    """A transcript line that is not `{"role": "user"|"assistant", "content": str, …}`."""


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    session: str
    text: str
    reply: str | None
    ts: datetime
    probe: bool = False


@dataclass(slots=True)
class TurnReport:
    session: str
    turn: int
    episode: int
    prompt_tokens: int
    full_history_tokens: int
    window_exchanges: int
    pending_exchanges: int
    summary_tokens: int
    fold_calls: int
    reset: bool
    reset_reason: str | None
    model_called: bool
    noise_reason: str | None = None
    recall_exchanges: int = 0
    recall_tokens: int = 0
    probe: bool = False
    # This turn's message continued the case a recent automatic reset closed: that reset
    # was undone (it does not stand), and why (`memory.soft_reset.revert`).
    reset_reverted: bool = False
    reset_revert_reason: str | None = None


@dataclass(slots=True)
class Report:
    tokenizer: str
    settings: dict[str, Any]
    turns: list[TurnReport] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    fold_input_tokens: int = 0
    fold_output_tokens: int = 0

    def totals(self) -> dict[str, Any]:
        """Over the real turns: probes are left out."""
        real = [t for t in self.turns if not t.probe]
        prompt = sum(t.prompt_tokens for t in real)
        full = sum(t.full_history_tokens for t in real)
        reverted = sum(1 for t in real if t.reset_reverted)
        return {
            "turns": len(real),
            "prompt_tokens": prompt,
            "full_history_tokens": full,
            "ratio": round(prompt / full, 4) if full else 0.0,
            "fold_calls": sum(t.fold_calls for t in real),
            "fold_input_tokens": self.fold_input_tokens,
            "fold_output_tokens": self.fold_output_tokens,
            "resets": sum(1 for t in real if t.reset) - reverted,  # the ones that stand
            "resets_reverted": reverted,
            "recall_tokens": sum(t.recall_tokens for t in real),
        }

    def as_json(self) -> dict[str, Any]:
        """The report format of DESIGN.md (contexts are written apart)."""
        return {
            "tokenizer": self.tokenizer,
            "settings": self.settings,
            "turns": [asdict(t) for t in self.turns],
            "totals": self.totals(),
        }


# -- transcript ---------------------------------------------------------------------------


def read_transcript(path: Path) -> list[TranscriptTurn]:
    """User lines as turns; an assistant line answers its session's latest user line."""
    turns: list[TranscriptTurn] = []
    last: dict[str, int] = {}  # session → index of its latest unanswered user turn
    ts = FIRST_TS - STEP
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        role, content, session, at, probe = _parse_line(raw, number)
        if probe:  # a dry run: it neither takes a reply nor moves the clock
            if role == "user":
                turns.append(TranscriptTurn(session, content, None, at or ts + STEP, True))
            continue
        ts = at or ts + STEP
        if role == "user":
            last[session] = len(turns)
            turns.append(TranscriptTurn(session, content, None, ts))
        elif session in last:
            index = last.pop(session)
            turns[index] = TranscriptTurn(session, turns[index].text, content, turns[index].ts)
    return turns


def _parse_line(raw: str, number: int) -> tuple[str, str, str, datetime | None, bool]:
    try:
        line = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"line {number}: not JSON ({exc.msg})") from None
    if not isinstance(line, dict) or line.get("role") not in ("user", "assistant"):
        raise TranscriptError(f'line {number}: needs "role": "user" or "assistant"')
    if not isinstance(line.get("content"), str):
        raise TranscriptError(f'line {number}: needs "content" as a string')
    if not isinstance(line.get("probe", False), bool):
        raise TranscriptError(f'line {number}: "probe" must be true or false')
    session = str(line.get("session") or DEFAULT_SESSION)
    at = None
    if line.get("ts"):
        try:
            at = datetime.fromisoformat(str(line["ts"]).replace("Z", "+00:00"))
        except ValueError:
            raise TranscriptError(f"line {number}: ts is not ISO-8601") from None
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
    return line["role"], line["content"], session, at, bool(line.get("probe", False))


# -- the model seam -----------------------------------------------------------------------


class ScriptedChatModel:
    """Answers with the transcript's reply for the current turn, else asks `fallback`;
    records every request it gets, so contexts are exactly what the model received."""

    def __init__(self, fallback: ChatModel, tokenizer: Tokenizer) -> None:
        self.fallback = fallback
        self.name = fallback.name
        self.tokenizer = tokenizer
        self.script: str | None = None
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        if self.script is None:
            return await self.fallback.complete(request)
        usage = Usage(
            count_messages(self.tokenizer, request.system, request.messages),
            self.tokenizer.count(self.script),
        )
        return ChatReply(self.script, "end", usage, "scripted")

    async def aclose(self) -> None:
        closer = getattr(self.fallback, "aclose", None)
        if closer is not None:
            await closer()


class ReplayClock:
    """The engine's clock during a replay: the current transcript line's time."""

    def __init__(self) -> None:
        self.now = FIRST_TS

    def __call__(self) -> datetime:
        return self.now


# -- the replay ---------------------------------------------------------------------------


def replay_settings(settings: Settings) -> dict[str, Any]:
    """What the report records of the settings (no paths, no secrets)."""
    return {
        "chat_model": settings.chat_model,
        "summary_model": settings.summary_model,
        "window_exchanges": settings.window_exchanges,
        "fold_batch": settings.fold_batch,
        "context_tokens": settings.context_tokens,
        "reply_tokens": settings.reply_tokens,
        "summary_tokens": settings.summary_tokens,
        "topic_detection": settings.topic_detection,
        "idle_reset_hours": settings.idle_reset_hours,
        "language": settings.language,
        "recall": settings.recall,
        "recall_tokens": settings.recall_tokens,
    }


async def run_replay(
    path: Path,
    settings: Settings,
    *,
    chat_model: ChatModel | None = None,
    summary_model: ChatModel | None = None,
    progress: Progress | None = None,
) -> Report:
    """Replay `path` on a fresh temporary database; models default to the settings'."""
    turns = read_transcript(path)
    if chat_model is None or summary_model is None:
        built_chat, built_summary = build_models(settings)
        chat_model = chat_model or built_chat
        summary_model = summary_model or built_summary
    tokenizer = default_tokenizer()
    scripted = ScriptedChatModel(chat_model, tokenizer)
    with tempfile.TemporaryDirectory(prefix="ventana-replay-") as tmp:
        app = await App.build(
            settings, db=Path(tmp) / "replay.db", chat_model=scripted, summary_model=summary_model
        )
        try:
            run = _Run(app, scripted, Report(app.tokenizer.name, replay_settings(settings)))
            if progress is not None:
                progress(0, len(turns))
            for done, turn in enumerate(turns, start=1):
                await run.turn(turn)
                if progress is not None:
                    progress(done, len(turns))
            run.report.fold_input_tokens = app.folds.input_tokens
            run.report.fold_output_tokens = app.folds.output_tokens
            return run.report
        finally:
            await app.aclose()


class _Run:
    """The state of one replay: histories per session and the turn being observed."""

    def __init__(self, app: App, scripted: ScriptedChatModel, report: Report) -> None:
        self.app = app
        self.scripted = scripted
        self.report = report
        self.clock = ReplayClock()
        app.engine.clock = self.clock
        app.folds.clock = self.clock
        app.engine.observers.append(self._observe)
        self.system_prompt = app.settings.resolved_system_prompt()
        self.history: dict[str, list[Message]] = {}
        self.seen: tuple[Prepared, Outcome] | None = None

    def _observe(self, prepared: Prepared, outcome: Outcome, _exchange: Exchange) -> None:
        self.seen = (prepared, outcome)

    async def turn(self, turn: TranscriptTurn) -> None:
        if turn.probe:
            await self.probe(turn)
            return
        app, where = self.app, SessionKey("console", turn.session)
        key = str(where)
        history = self.history.setdefault(turn.session, [])
        number = len(history) // 2 + 1
        before = await app.store.episodes(key)
        calls, sent = app.folds.calls, len(self.scripted.requests)
        self.seen, self.scripted.script, self.clock.now = None, turn.reply, turn.ts
        inbound = Inbound(where, turn.text, f"replay-{turn.session}-{number}", turn.ts, key)
        shown = await app.handler.handle(inbound)
        await app.folds.drain()
        after = await app.store.episodes(key)
        requests = self.scripted.requests[sent:]
        message = Message("user", turn.text)
        full = count_messages(app.tokenizer, self.system_prompt, [*history, message])
        window, pending, summary = await self._shape(key)
        reset = bool(before) and after[-1].id > before[-1].id
        outcome = self.seen[1] if self.seen else None
        reverted = _reverted(self.seen[0] if self.seen else None)
        self.report.turns.append(
            TurnReport(
                turn.session, number, len(after),
                sum(count_messages(app.tokenizer, r.system, r.messages) for r in requests),
                full, window, pending, summary, app.folds.calls - calls, reset,
                (after[-1].opened_by or "").removeprefix("auto:") if reset else None,
                bool(requests), outcome.noise_reason if outcome else None,
                *_recall_of(outcome.assembly if outcome else None),
                reset_reverted=reverted is not None, reset_revert_reason=reverted,
            )
        )  # fmt: skip
        self.report.contexts.append(_context(turn, number, requests))
        said = outcome.reply.text if outcome and outcome.reply else "\n\n".join(shown)
        history += [message, Message("assistant", said)]

    async def probe(self, turn: TranscriptTurn) -> None:
        """A dry run at this point of the session (`bot.ops.probes`)."""
        key, history = f"console:{turn.session}", self.history.get(turn.session, [])
        self.clock.now = turn.ts
        got = await dry_run(self.app, key, turn.text, history, self.system_prompt)
        number = len(history) // 2 + 1
        self.report.turns.append(
            TurnReport(
                turn.session, number, got.episodes, got.prompt_tokens, got.full_history_tokens,
                got.window, got.pending, got.summary_tokens, 0, got.reset, got.reset_reason,
                False, None, got.recall_exchanges, got.recall_tokens, probe=True,
                reset_reverted=got.revert_reason is not None,
                reset_revert_reason=got.revert_reason,
            )
        )  # fmt: skip
        self.report.contexts.append(
            {"session": turn.session, "turn": number, "probe": True, "system": got.system,
             "messages": got.messages, "model_called": False}
        )  # fmt: skip

    async def _shape(self, key: str) -> tuple[int, int, int]:
        """Window, pending and summary tokens of the request sent (or, with no call, of
        the stored state after the turn)."""
        if self.seen is not None:
            assembly = self.seen[1].assembly
            return len(assembly.window), len(assembly.pending), assembly.tokens.get("summary", 0)
        settings = self.app.settings
        state = await self.app.store.peek_state(key, settings.window_exchanges)
        if state is None:
            return 0, 0, 0
        summary = state.summary
        memo = memory_block(summary, settings.language) if summary and summary.text else ""
        return len(state.window), len(state.pending), self.app.tokenizer.count(memo)


def _reverted(prepared: Prepared | None) -> str | None:
    """Why the turn reverted the latest automatic reset, or None when it did not."""
    return revert_reason(prepared.decision) if prepared is not None else None


def _recall_of(assembly: Assembly | None) -> tuple[int, int]:
    """(recall exchanges, recall tokens) of the request."""
    if assembly is None:
        return 0, 0
    return len(assembly.recall.hits), assembly.tokens.get("recall", 0)


def _context(turn: TranscriptTurn, number: int, requests: list[ChatRequest]) -> dict[str, Any]:
    """The last request sent this turn; with no call, only the user message (marked)."""
    if not requests:
        messages = [{"role": "user", "content": turn.text}]
        return {"session": turn.session, "turn": number, "system": "", "messages": messages,
                "model_called": False, "probe": False}  # fmt: skip
    last = requests[-1]
    return {
        "session": turn.session,
        "turn": number,
        "system": last.system,
        "messages": [{"role": m.role, "content": m.content} for m in last.messages],
        "model_called": True,
        "probe": False,
    }


def write_outputs(report: Report, out: Path | None, contexts: Path | None) -> None:
    if out is not None:
        out.write_text(
            json.dumps(report.as_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if contexts is not None:
        with contexts.open("w", encoding="utf-8") as fh:
            for line in report.contexts:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
