"""The conversation handler: durable intake, per-chat order, commands, the turn, delivery.

Channel adapters convert their updates to `Inbound` and register an `Outbox`. A message
is written to the inbox (deduplicated by external id) before anything else; it is then
processed in its chat's queue, its reply is recorded with the exchange, delivered, and
only then marked done. `recover()` finishes whatever a crash interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

import structlog

from bot.conversation import commands
from bot.conversation.commands import GroupAdmins
from bot.conversation.debug_view import render_debug
from bot.conversation.inbound import Inbound
from bot.conversation.serial import KeyedSerial
from bot.conversation.texts import error_text, t
from config.settings import Settings
from memory.engine import MemoryEngine, Outcome, Prepared
from memory.policy import Assembly, TooLarge
from memory.store import Store
from memory.store.turns import Intake
from memory.types import InboxEntry, SessionKey
from providers.base import valid_text
from providers.streaming import TextSink

log = structlog.get_logger(__name__)


class Outbox(Protocol):
    """Where replies for one channel go."""

    async def send(self, key: SessionKey, texts: Sequence[str]) -> asyncio.Future[None] | None:
        """Deliver, or return a future for a delivery that goes on in the background."""
        ...

    def working(self, key: SessionKey) -> AbstractAsyncContextManager[None]: ...


@runtime_checkable
class LiveOutbox(Outbox, Protocol):
    """An outbox that can show a reply while it is written (Telegram drafts)."""

    def live(self, key: SessionKey) -> AbstractAsyncContextManager[TextSink | None]: ...


class ConversationHandler:
    def __init__(self, settings: Settings, store: Store, engine: MemoryEngine) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine
        self.language = settings.language
        self.outboxes: dict[str, Outbox] = {}
        self.commands = commands.Context(settings, engine.episodes, store)
        self.serial = KeyedSerial()
        self._queued: set[int] = set()  # inbox ids queued or running here (bounded by work)
        self._later: dict[int, asyncio.Future[None]] = {}  # delivery retried in the background
        self._slowed: set[str] = set()  # chats told to slow down, until their queue empties

    def register(self, channel: str, outbox: Outbox, admins: GroupAdmins | None = None) -> None:
        """Where `channel`'s replies go; `admins` answers who administers its groups."""
        self.outboxes[channel] = outbox
        if admins is not None:
            self.commands.admins[channel] = admins

    async def reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        """Record input that is acknowledged but never processed (malformed) with its
        reason, for dedupe; False when it was already recorded."""
        return await self.store.inbox_reject(key, external_id, reason, at)

    async def set_debug(self, key: str, on: bool, user: str, at: datetime) -> None:
        """Switch debug mode for `user`'s own messages under `key` (console `--debug`)."""
        await self.store.set_debug(key, on, at, user)

    # -- intake -------------------------------------------------------------------------

    async def submit(self, inbound: Inbound) -> asyncio.Future[list[str]] | None:
        """Make the message durable, then queue it behind its chat's earlier messages.

        Returns None for a redelivery (already in the inbox): it is not processed again.
        """
        text = valid_text(inbound.text)
        if text != inbound.text:
            inbound = replace(inbound, text=text)
        key = str(inbound.key)
        if not self.settings.is_allowed(inbound.user):
            log.info("user_not_allowed", key=key)
            return self.serial.submit(key, lambda: self._refuse(inbound))
        if self.serial.waiting(key) >= self.settings.max_queued_per_chat:
            return await self._over_cap(inbound)
        # The intake reads the chat's turn state in its round trip; the store keeps it for
        # the turn while nothing of the chat is written meanwhile.
        command = commands.is_command(inbound.text)
        draft = InboxEntry(
            0, key, inbound.external_id, inbound.user, inbound.kind, inbound.text, inbound.ts
        )
        if command:  # a command is stored and answered even in debug mode
            message = (key, inbound.external_id, inbound.user, inbound.kind, inbound.text)
            intake = Intake(await self.store.inbox_add(*message, inbound.ts))
        else:
            intake = await self.store.begin_turn(draft, self.engine.config.window)
        if intake.debug:  # a dry run writes nothing, not even the inbox entry
            return self.serial.submit(key, lambda: self._process(draft))
        added = intake.entry
        if added is None:
            return await self._redelivered(inbound)
        return self._queue(added)

    async def _over_cap(self, inbound: Inbound) -> asyncio.Future[list[str]] | None:
        """Past the cap a message is acknowledged and recorded as rejected, not answered:
        queuing it for later would still be hours of model calls for one chat. The user
        is told once per burst (until the chat's queue empties), at once, not queued."""
        key = str(inbound.key)
        fresh = await self.store.inbox_reject(
            key, inbound.external_id, "over_queue_cap", inbound.ts
        )
        if not fresh:  # a redelivery of something already in
            return await self._redelivered(inbound)
        log.info("over_queue_cap", key=key, cap=self.settings.max_queued_per_chat)
        texts: list[str] = []
        if key not in self._slowed:
            self._slowed.add(key)
            texts = [t(self.language, "slow_down", count=self.serial.waiting(key))]
            await self._deliver(inbound.key, texts)
        done: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        done.set_result(texts)
        return done

    async def _redelivered(self, inbound: Inbound) -> asyncio.Future[list[str]] | None:
        """A redelivery is normally ignored. But if its entry is unfinished and nobody here
        is working on it (the first delivery's intake was interrupted after the commit),
        the redelivery is what gets it answered."""
        key = str(inbound.key)
        entry = await self.store.inbox_get(key, inbound.external_id)
        if entry is None or entry.status == "done" or entry.id in self._queued:
            log.info("duplicate_ignored", key=key, external_id=inbound.external_id)
            return None
        log.info("duplicate_resumed", key=key, external_id=inbound.external_id)
        return self._queue(entry)

    def _queue(self, entry: InboxEntry) -> asyncio.Future[list[str]]:
        self._queued.add(entry.id)
        return self.serial.submit(entry.key, lambda: self._process(entry))

    async def handle(self, inbound: Inbound) -> list[str]:
        """Submit and wait for the replies (console, replay, tests)."""
        future = await self.submit(inbound)
        return await future if future is not None else []

    async def recover(self, channel: str | None = None) -> int:
        """Queue every inbox entry a previous run left unfinished; returns how many.

        A channel passes its own name, so it never queues (and delivers nowhere) another
        channel's entries before that channel has registered its outbox.
        """
        entries = [
            entry
            for entry in await self.store.inbox_unfinished()
            if channel is None or entry.session.channel == channel
        ]
        for entry in entries:
            if entry.id not in self._queued:
                self._queue(entry)
        if entries:
            log.info("inbox_recovered", entries=len(entries))
        return len(entries)

    async def drain(self) -> None:
        """Wait until everything queued here is answered, delivered and marked done."""
        await self.serial.drain()
        await asyncio.gather(*self._later.values(), return_exceptions=True)
        await self.store.inbox_settled()

    async def drain_folds(self) -> None:
        """Wait for the background folds the turns asked for (the console, before exit)."""
        await self.engine.folds.drain()

    async def aclose(self) -> None:
        await self.serial.aclose()

    # -- processing ---------------------------------------------------------------------

    async def _process(self, entry: InboxEntry) -> list[str]:
        structlog.contextvars.bind_contextvars(key=entry.key)
        try:
            return await self._process_entry(entry)
        finally:
            if not self.serial.waiting(entry.key):  # the burst is over
                self._slowed.discard(entry.key)
            if entry.id not in self._later:
                self._queued.discard(entry.id)
            structlog.contextvars.unbind_contextvars("key")

    async def _process_entry(self, entry: InboxEntry) -> list[str]:
        """The chat is held (across workers on a shared store) while its claimed entries
        run, oldest first."""
        if not entry.id:  # a dry run never entered the inbox
            return await self._run_entry(entry)
        texts: list[str] = []
        async with self.store.claim_turn(entry) as claim:
            for each in claim.entries:
                replies = await self._run_entry(each)
                texts = replies if each.id == entry.id else texts
        return texts

    async def _run_entry(self, entry: InboxEntry) -> list[str]:
        if entry.status == "answered":  # replied before a crash, delivery unconfirmed
            texts = list(entry.replies)
        else:
            async with self._working(entry.session):
                texts, recorded = await self._respond(entry)
            if entry.id and not recorded:  # a turn marks it with its exchange
                await self.store.inbox_mark(entry.id, "answered", texts, at=_now())
        later = await self._deliver(entry.session, texts)
        if entry.id and later is not None:  # done only once delivered; the chat moves on
            self._mark_when_delivered(entry.id, later)
        elif entry.id:  # id 0: a debug message that never entered the inbox
            # Not awaited: the mark joins the next batch of writes; the store reads the
            # entry as done meanwhile, so a redelivery is not sent again.
            self.store.inbox_delivered(entry.id, at=_now())
        return texts

    def _mark_when_delivered(self, entry_id: int, delivery: asyncio.Future[None]) -> None:
        """The outbox retries in the background: the entry is done once that delivery
        lands; if it never does, it stays answered and is resent at the next start."""

        async def mark() -> None:
            with contextlib.suppress(Exception):
                await delivery
                self.store.inbox_delivered(entry_id, at=_now())

        marked = asyncio.ensure_future(mark())
        self._later[entry_id] = marked
        marked.add_done_callback(functools.partial(self._marked, entry_id))

    def _marked(self, entry_id: int, _done: asyncio.Future[None]) -> None:
        self._later.pop(entry_id, None)
        self._queued.discard(entry_id)

    async def _respond(self, entry: InboxEntry) -> tuple[list[str], bool]:
        """The replies, and whether they were already recorded with an exchange."""
        lang = self.language
        text = entry.text.strip()
        if entry.kind != "text":
            return [t(lang, "only_text")], False
        if not text:
            return [t(lang, "empty")], False
        if commands.is_command(text):
            return await commands.run(self.commands, entry, text), False
        if len(text) > self.settings.max_message_chars:
            limit = self.settings.max_message_chars
            return [t(lang, "too_long", chars=len(text), limit=limit)], False
        # Debug is decided now, not at intake: "/debug on" and the next message may arrive
        # in one batch, and that message must already be a dry run.
        prepared = await self.engine.prepare(entry.key, text, user=entry.user)
        if prepared.dry_run:
            return [render_debug(prepared, self.language)], False
        if isinstance(prepared.plan, TooLarge):
            log.info("message_too_large", tokens=prepared.plan.tokens, budget=prepared.plan.budget)
            notice = [t(lang, "auto_reset")] if prepared.decision.reset else []
            why = "too_large" if prepared.plan.reason == "message" else "memory_unavailable"
            return [*notice, t(lang, why)], False
        return await self._turn(entry, prepared), True

    async def _turn(self, entry: InboxEntry, prepared: Prepared) -> list[str]:
        notice = [t(self.language, "auto_reset")] if prepared.decision.reset else []
        async with self._live(entry.session) as on_text:
            outcome = await self.engine.call(prepared, on_text)
        shown = (*notice, self._shown(outcome))
        await self.engine.record(
            prepared,
            outcome,
            shown=shown,
            inbox_id=entry.id or None,
            external_id=entry.external_id,
        )
        self._log_turn(prepared, outcome)
        return list(shown)

    def _shown(self, outcome: Outcome) -> str:
        """What the user sees: the reply, or a short localized apology for noise."""
        if outcome.error is not None:
            return error_text(self.language, outcome.error.kind)
        reply = outcome.reply.text.strip() if outcome.reply else ""
        if outcome.noise_reason == "truncated" and reply:
            return reply + t(self.language, "truncated")
        if outcome.noise_reason in ("empty", "repetition_loop") or not reply:
            return t(self.language, "error_generic")
        return reply

    def _log_turn(self, prepared: Prepared, outcome: Outcome) -> None:
        assembly: Assembly = outcome.assembly
        log.info(
            "turn",
            tokens=assembly.tokens,
            budget=assembly.budget,
            window=len(assembly.window),
            pending=len(assembly.pending),
            summary_version=assembly.summary.version if assembly.summary else 0,
            sync_folds=prepared.sync_folds,
            latency_ms=round(outcome.latency_s * 1000),
            topic=prepared.decision.action,
            topic_reason=prepared.decision.reason,
            noise=outcome.noise_reason,
            retried=outcome.retried,
        )

    async def _refuse(self, inbound: Inbound) -> list[str]:
        texts = [t(self.language, "not_allowed")]
        await self._deliver(inbound.key, texts)
        return texts

    # -- delivery -----------------------------------------------------------------------

    async def _deliver(self, key: SessionKey, texts: Sequence[str]) -> asyncio.Future[None] | None:
        outbox = self.outboxes.get(key.channel)
        if outbox is not None and texts:
            return await outbox.send(key, texts)
        return None

    @contextlib.asynccontextmanager
    async def _working(self, key: SessionKey) -> AsyncIterator[None]:
        outbox = self.outboxes.get(key.channel)
        if outbox is None:
            yield
            return
        async with outbox.working(key):
            yield

    @contextlib.asynccontextmanager
    async def _live(self, key: SessionKey) -> AsyncIterator[TextSink | None]:
        outbox = self.outboxes.get(key.channel)
        if not isinstance(outbox, LiveOutbox):
            yield None
            return
        async with outbox.live(key) as on_text:
            yield on_text


def _now() -> datetime:
    return datetime.now(UTC)
