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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.app import App, build_models
from bot.conversation.inbound import Inbound
from bot.ops.probes import dry_run, revert_reason
from bot.ops.report import Report, TurnReport, write_outputs
from config.settings import Settings
from memory.engine import Outcome, Prepared
from memory.policy import Assembly
from memory.tokens import Tokenizer, count_messages, default_tokenizer
from memory.types import Exchange, SessionKey
from providers.base import ChatModel, ChatReply, ChatRequest, Message, Usage

DEFAULT_SESSION = "default"
FIRST_TS = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # when the transcript gives no times
STEP = timedelta(minutes=1)
Progress = Callable[[int, int], None]
__all__ = [
    "Report",
    "TranscriptError",
    "TurnReport",
    "read_transcript",
    "run_replay",
    "write_outputs",
]


class TranscriptError(ValueError):
    """A transcript line that is not `{"role": "user"|"assistant", "content": str, …}`."""


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    session: str
    text: str
    reply: str | None
    ts: datetime
    probe: bool = False


# -- transcript ---------------------------------------------------------------------------


def read_transcript(path: Path) -> list[TranscriptTurn]:
    """User lines as turns; an assistant line answers its session's latest user line."""
    turns: list[TranscriptTurn] = []
    last: dict[str, int] = {}  # session → index of its latest unanswered user turn
    ts = FIRST_TS - STEP
    for number, raw in enumerate(_text_of(path).splitlines(), start=1):
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


def _text_of(path: Path) -> str:
    """The transcript as text: UTF-8, a leading byte-order mark (Windows editors) skipped."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        number = data[: exc.start].count(b"\n") + 1
        raise TranscriptError(f"line {number}: not UTF-8 text") from None


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
    db: Path | None = None,
) -> Report:
    """Replay `path` on a fresh database (`db`, else a temporary file); models default to
    the settings'. The app is built on the transcript's clock with the replay's observer,
    so everything it dates (exchanges, folds, episodes) is in transcript time."""
    turns = read_transcript(path)
    if chat_model is None or summary_model is None:
        built_chat, built_summary = build_models(settings)
        chat_model = chat_model or built_chat
        summary_model = summary_model or built_summary
    tokenizer = default_tokenizer()
    scripted = ScriptedChatModel(chat_model, tokenizer)
    clock, seen = ReplayClock(), _Seen()
    with tempfile.TemporaryDirectory(prefix="ventana-replay-") as tmp:
        app = await App.build(
            settings,
            db=db or Path(tmp) / "replay.db",
            chat_model=scripted,
            summary_model=summary_model,
            clock=clock,
            tokenizer=tokenizer,
            observers=[seen],
        )
        try:
            report = Report(app.tokenizer.name, replay_settings(settings))
            run = _Run(app, scripted, report, clock, seen)
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


class _Seen:
    """The engine's observer during a replay: the turn recorded last (None: no call)."""

    def __init__(self) -> None:
        self.last: tuple[Prepared, Outcome] | None = None

    def __call__(self, prepared: Prepared, outcome: Outcome, _exchange: Exchange) -> None:
        self.last = (prepared, outcome)


class _Run:
    """The state of one replay: histories per session and the turn being observed."""

    def __init__(
        self,
        app: App,
        scripted: ScriptedChatModel,
        report: Report,
        clock: ReplayClock,
        seen: _Seen,
    ) -> None:
        self.app = app
        self.scripted = scripted
        self.report = report
        self.clock = clock
        self.seen = seen
        self.system_prompt = app.settings.resolved_system_prompt()
        self.history: dict[str, list[Message]] = {}

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
        self.seen.last, self.scripted.script, self.clock.now = None, turn.reply, turn.ts
        inbound = Inbound(where, turn.text, f"replay-{turn.session}-{number}", turn.ts, key)
        shown = await app.handler.handle(inbound)
        await app.folds.drain()
        after = await app.store.episodes(key)
        requests = self.scripted.requests[sent:]
        message = Message("user", turn.text)
        window, pending, summary = await self._shape(key)
        reset = bool(before) and after[-1].id > before[-1].id
        outcome = self.seen.last[1] if self.seen.last else None
        reverted = _reverted(self.seen.last[0] if self.seen.last else None)
        recall_exchanges, recall_tokens = _recall_of(outcome.assembly if outcome else None)
        tokenizer = app.tokenizer
        self.report.turns.append(
            TurnReport(
                session=turn.session,
                turn=number,
                episode=len(after),
                prompt_tokens=sum(
                    count_messages(tokenizer, r.system, r.messages) for r in requests
                ),
                full_history_tokens=count_messages(
                    tokenizer, self.system_prompt, [*history, message]
                ),
                window_exchanges=window,
                pending_exchanges=pending,
                summary_tokens=summary,
                fold_calls=app.folds.calls - calls,
                reset=reset,
                reset_reason=(after[-1].opened_by or "").removeprefix("auto:") if reset else None,
                model_called=bool(requests),
                noise_reason=outcome.noise_reason if outcome else None,
                recall_exchanges=recall_exchanges,
                recall_tokens=recall_tokens,
                reset_reverted=reverted is not None,
                reset_revert_reason=reverted,
            )
        )
        self.report.contexts.append(_context(turn, number, requests))
        said = outcome.reply.text if outcome and outcome.reply else "\n\n".join(shown)
        history += [message, Message("assistant", said)]

    async def probe(self, turn: TranscriptTurn) -> None:
        """A dry run at this point of the session (`bot.ops.probes`)."""
        key, history = f"console:{turn.session}", self.history.get(turn.session, [])
        self.clock.now = turn.ts
        got = await dry_run(self.app, key, turn.text, history, self.system_prompt)
        number = len(history) // 2 + 1
        self.report.turns.append(got.turn_report(turn.session, number))
        self.report.contexts.append(got.context(turn.session, number))

    async def _shape(self, key: str) -> tuple[int, int, int]:
        """Window, pending and summary tokens of the request sent (or, with no call, of
        the request the stored state gives now: the engine's preview)."""
        if self.seen.last is not None:
            assembly = self.seen.last[1].assembly
            return len(assembly.window), len(assembly.pending), assembly.tokens.get("summary", 0)
        if await self.app.store.peek_state(key, 1) is None:  # a preview would create the key
            return 0, 0, 0
        plan = (await self.app.engine.preview(key)).plan
        if not isinstance(plan, Assembly):
            return 0, 0, 0
        return len(plan.window), len(plan.pending), plan.tokens.get("summary", 0)


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
