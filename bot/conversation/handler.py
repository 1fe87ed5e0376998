"""The conversation handler: the intake, per-chat order, commands, the turn, delivery.

Channel adapters convert their updates to `Inbound` and register an `Outbox`. The intake
(`intake.py`) writes a message to the inbox (deduplicated by external id) before
anything else and queues it in its chat's order; here it is processed (a command, or a
turn of the engine), its reply recorded with the exchange; `delivery.py` delivers it
and only then marks it done. `recover()` finishes whatever a crash interrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import structlog

from bot.conversation import commands
from bot.conversation.commands import GroupAdmins
from bot.conversation.debug_view import render_debug
from bot.conversation.delivery import Delivery, LiveOutbox, Outbox
from bot.conversation.inbound import Inbound
from bot.conversation.intake import ChatIntake
from bot.conversation.serial import KeyedSerial
from bot.conversation.texts import error_text, t
from config.settings import Settings
from memory.engine import MemoryEngine, Outcome, Prepared
from memory.policy import Assembly, TooLarge
from memory.store import Store, is_store_error
from memory.types import Arrival, InboxEntry

__all__ = ["ConversationHandler", "LiveOutbox", "Outbox"]

log = structlog.get_logger(__name__)
Turn = Callable[[InboxEntry], Awaitable[list[str]]]
# A turn the database failed (down, disk full) is tried again after these, about a
# minute in all; then the user gets an apology and the entry waits for the next start.
STORE_RETRY_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


class ConversationHandler:
    def __init__(self, settings: Settings, store: Store, engine: MemoryEngine) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine
        self.language = settings.language
        self.commands = commands.Context(settings, engine.episodes, store)
        self.serial = KeyedSerial()
        self.delivery = Delivery(store, settled=self._settled)
        self.store_retry_s = STORE_RETRY_S
        self._store_failures: dict[int, int] = {}  # entry id → failed attempts (bounded)
        self._retries: dict[int, asyncio.TimerHandle] = {}  # entry id → its next try
        self.intake = ChatIntake(
            settings,
            store,
            engine.config.window,
            self.serial,
            self.delivery,
            turn=self._process,
            dry_run=self._dry_run,
            now=engine.clock,
        )

    def register(self, channel: str, outbox: Outbox, admins: GroupAdmins | None = None) -> None:
        """Where `channel`'s replies go; `admins` answers who administers its groups."""
        self.delivery.register(channel, outbox)
        if admins is not None:
            self.commands.admins[channel] = admins

    async def submit(self, inbound: Inbound) -> asyncio.Future[list[str]] | None:
        """Make the message durable, then queue it behind its chat's earlier messages.

        Returns None for a redelivery (already in the inbox): it is not processed again.
        """
        return await self.intake.submit(inbound)

    async def reject(self, key: str, external_id: str, reason: str, at: datetime) -> bool:
        """Record input that is acknowledged but never processed (malformed) with its
        reason, for dedupe; False when it was already recorded."""
        return await self.store.inbox_reject(key, external_id, reason, at)

    async def set_debug(self, key: str, on: bool, user: str, at: datetime) -> None:
        """Switch debug mode for `user`'s own messages under `key` (console `--debug`)."""
        await self.store.set_debug(key, on, at, user)

    async def debug_on(self, key: str, user: str) -> bool:
        """Whether `user`'s own messages under `key` are dry runs now (False for a new key)."""
        state = await self.store.peek_state(key, self.settings.window_exchanges)
        return state is not None and state.debug_for(user)

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
            if entry.id not in self.intake.queued:
                self.intake.queue(entry)
        if entries:
            log.info("inbox_recovered", entries=len(entries))
        return len(entries)

    async def drain(self) -> None:
        """Wait until everything queued here is answered, delivered and marked done."""
        await self.serial.drain()
        await self.delivery.drain()
        await self.store.inbox_settled()

    async def drain_folds(self) -> None:
        """Wait for the background folds the turns asked for (the console, before exit)."""
        await self.engine.folds.drain()

    async def aclose(self) -> None:
        for handle in self._retries.values():
            handle.cancel()
        await self.serial.aclose()

    # -- processing ---------------------------------------------------------------------

    async def _process(self, entry: InboxEntry) -> list[str]:
        return await self._guarded(entry, self._claimed)

    async def _retry(self, entry: InboxEntry) -> list[str]:
        return await self._guarded(entry, self._fresh)

    async def _guarded(self, entry: InboxEntry, run: Turn) -> list[str]:
        """`run(entry)`, never raising: a store failure is tried again later, or
        apologised for; anything else (a bug) is `_failed`. The entry is no longer queued
        here unless a retry or a background delivery still has it."""
        structlog.contextvars.bind_contextvars(key=entry.key)
        retrying = False
        try:
            texts = await run(entry)
            self._store_failures.pop(entry.id, None)
            return texts
        except Exception as exc:
            try:
                retrying = is_store_error(exc) and self._store_failed(entry, exc)
            except Exception as bug:  # a bug on the retry path: as in the turn itself
                return await self._failed(entry, bug)
            if retrying:
                return []
            return await (
                self._apologise(entry) if is_store_error(exc) else self._failed(entry, exc)
            )
        finally:
            self.intake.burst_over(entry.key)
            if not retrying and entry.id not in self.delivery.later:
                self.intake.queued.discard(entry.id)
            structlog.contextvars.unbind_contextvars("key")

    async def _claimed(self, entry: InboxEntry) -> list[str]:
        """The chat is held (across workers on a shared store) while its claimed entries
        run, oldest first. One that breaks on a bug is apologised for and the rest still
        run: an earlier entry a dead worker left must not take its chat down with it."""
        texts: list[str] = []
        async with self.store.claim_turn(entry) as claim:
            for each in claim.entries:
                try:
                    replies = await self._run_entry(each)
                except Exception as exc:
                    if is_store_error(exc):
                        raise
                    replies = await self._failed(each, exc)
                texts = replies if each.id == entry.id else texts
        return texts

    async def _fresh(self, entry: InboxEntry) -> list[str]:
        """The entry as the store has it now: answered meanwhile (its exchange committed
        before the failure) it is only delivered, never answered twice."""
        fresh = await self.store.inbox_get(entry.key, entry.external_id)
        if fresh is None or fresh.status in ("done", "rejected"):
            return []
        return await self._claimed(fresh)

    def _store_failed(self, entry: InboxEntry, exc: Exception) -> bool:
        """Try the entry again later (True), or give up on it for this run (False)."""
        attempt = self._store_failures.get(entry.id, 0)
        error = type(exc).__name__
        if attempt >= len(self.store_retry_s):
            self._store_failures.pop(entry.id, None)
            log.error("turn_store_failed", error=error, attempts=attempt + 1)
            return False
        self._store_failures[entry.id] = attempt + 1
        log.warning("turn_store_retried", error=error, attempt=attempt + 1)
        loop = asyncio.get_running_loop()
        handle = loop.call_later(self.store_retry_s[attempt], self._requeue, entry)
        self._retries[entry.id] = handle
        return True

    def _requeue(self, entry: InboxEntry) -> None:
        self._retries.pop(entry.id, None)
        self.serial.submit(entry.key, lambda: self._retry(entry))

    async def _apologise(self, entry: InboxEntry, text: str = "error_store") -> list[str]:
        """The store stayed down: the user hears so; the entry stays in the inbox (not
        done) and is answered at the next start (`recover`)."""
        texts = [t(self.language, text)]
        try:
            await self.delivery.send(entry.session, texts)
        except Exception:
            log.exception("apology_undelivered")
        return texts

    async def _failed(self, entry: InboxEntry, exc: Exception) -> list[str]:
        """A turn broke on something unexpected (a bug, not the database). The user hears
        the generic apology ("try again"), recorded as the entry's answer and delivered
        like any reply, so the entry ends done. It is not left for the next start: a bug
        a message sets off would break it at every start, and on PostgreSQL before each
        later message of its chat (the next holder claims it first). An entry already
        delivered gets nothing more: never answered twice. One whose reply was made and
        recorded broke in the sending (the channel down, a network error): that reply
        stands, and is sent again by the next start's `recover`, never replaced by an
        apology. Should the store fail too, the apology is only sent and the entry waits
        for the next start, as when the store is down."""
        self._store_failures.pop(entry.id, None)
        texts = [t(self.language, "error_generic")]
        error = type(exc).__name__
        try:
            now = await self.store.inbox_get(entry.key, entry.external_id)
        except Exception:
            log.error("turn_failed", error=error, exc_info=exc)
            log.exception("turn_failed_unmarked")
            return await self._apologise(entry, "error_generic")
        if now is not None and now.status == "answered":
            log.error("reply_undelivered", error=error, exc_info=exc)
            return []
        log.error("turn_failed", error=error, exc_info=exc)
        if now is None or now.status in ("done", "rejected"):
            return []
        try:
            await self.store.inbox_mark(entry.id, "answered", texts, at=_now())
        except Exception:
            log.exception("turn_failed_unmarked")
            return await self._apologise(entry, "error_generic")
        try:
            await self.delivery.reply(entry.id, entry.session, texts)  # done once delivered
        except Exception:  # answered: the apology goes again at the next start
            log.exception("apology_undelivered")
        return texts

    async def _dry_run(self, arrival: Arrival) -> list[str]:
        """A message of a sender in debug mode: never in the inbox, nothing marked."""
        structlog.contextvars.bind_contextvars(key=arrival.key)
        try:
            async with self.delivery.working(arrival.session):
                texts, _ = await self._respond(arrival)
            await self.delivery.send(arrival.session, texts)
            return texts
        finally:
            self.intake.burst_over(arrival.key)
            structlog.contextvars.unbind_contextvars("key")

    async def _run_entry(self, entry: InboxEntry) -> list[str]:
        if entry.status == "answered":  # replied before a crash, delivery unconfirmed
            texts = list(entry.replies)
        else:
            async with self.delivery.working(entry.session):
                texts, recorded = await self._respond(entry)
            if not recorded:  # a turn marks it with its exchange
                await self.store.inbox_mark(entry.id, "answered", texts, at=_now())
        await self.delivery.reply(entry.id, entry.session, texts)  # done once delivered
        return texts

    def _settled(self, entry_id: int) -> None:
        self.intake.queued.discard(entry_id)

    async def _respond(self, message: InboxEntry | Arrival) -> tuple[list[str], bool]:
        """The replies, and whether they were already recorded with an exchange."""
        lang = self.language
        text = message.text.strip()
        if message.kind != "text":
            return [t(lang, "only_text")], False
        if not text:
            return [t(lang, "empty")], False
        if commands.is_command(text):
            return await commands.run(self.commands, message, text), False
        if len(text) > self.settings.max_message_chars:
            limit = self.settings.max_message_chars
            return [t(lang, "too_long", chars=len(text), limit=limit)], False
        # Debug is decided now, not at intake: "/debug on" and the next message may arrive
        # in one batch, and that message must already be a dry run.
        prepared = await self.engine.prepare(
            message.key,
            text,
            user=message.user,
            operator=self.settings.is_operator(message.user),
        )
        if prepared.dry_run:
            return [render_debug(prepared, self.language)], False
        if isinstance(prepared.plan, TooLarge):
            log.info("message_too_large", tokens=prepared.plan.tokens, budget=prepared.plan.budget)
            notice = _notice(prepared, lang)
            why = "too_large" if prepared.plan.reason == "message" else "memory_unavailable"
            return [*notice, t(lang, why)], False
        return await self._turn(message, prepared), True

    async def _turn(self, message: InboxEntry | Arrival, prepared: Prepared) -> list[str]:
        notice = _notice(prepared, self.language)
        async with self.delivery.live(message.session) as on_text:
            outcome = await self.engine.call(prepared, on_text)
        shown = (*notice, self._shown(outcome))
        await self.engine.record(
            prepared,
            outcome,
            shown=shown,
            inbox_id=message.id if isinstance(message, InboxEntry) else None,
            external_id=message.external_id,
        )
        self._log_turn(prepared, outcome)
        return list(shown)

    def _shown(self, outcome: Outcome) -> str:
        """What the user sees: the reply, or a short localized apology for noise."""
        if outcome.error is not None:
            return error_text(self.language, outcome.error.kind)
        reply = outcome.reply.text.strip() if outcome.reply else ""
        if outcome.reply is not None and outcome.reply.capped:  # far too long to show
            return t(self.language, "error_generic")
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


def _now() -> datetime:
    return datetime.now(UTC)


def _notice(prepared: Prepared, language: str) -> list[str]:
    """What the user is told before the reply: a reset began a new conversation, or this
    message took an automatic reset back (`memory.soft_reset`)."""
    if prepared.decision.reset:
        return [t(language, "auto_reset")]
    if prepared.decision.reason == "reset_reverted":
        return [t(language, "auto_revert")]
    return []
