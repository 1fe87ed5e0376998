"""The intake: a message is made durable before it is acknowledged, then queued behind
its chat's earlier messages.

Written to the inbox first (deduplicated by external id), in the same round trip as the
chat's turn state; a sender with debug on stores nothing and gets a dry run instead (an
`Arrival` job, never an inbox entry). Senders outside the allowlist are refused, at
most once per `REFUSAL_INTERVAL_S` per chat (the rest are dropped, never queued), and a
chat past its queue cap is told to slow down, without a model call.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Protocol

import structlog

from bot.conversation import commands
from bot.conversation.delivery import Delivery
from bot.conversation.inbound import Inbound
from bot.conversation.serial import KeyedSerial
from bot.conversation.texts import t
from config.settings import Settings
from memory.store.inbox import DeliveryInbox
from memory.store.turns import Intake, TurnStore
from memory.types import Arrival, InboxEntry
from providers.base import valid_text

log = structlog.get_logger(__name__)

Replies = asyncio.Future[list[str]]
REFUSAL_INTERVAL_S = 60.0  # a chat outside the allowlist is told at most this often
REFUSALS_KEPT = 10_000  # chats remembered as recently refused (the oldest go first)


class IntakeStore(TurnStore, DeliveryInbox, Protocol):
    """What the intake writes: the turn's intake and the inbox's other entries."""


class ChatIntake:
    def __init__(
        self,
        settings: Settings,
        store: IntakeStore,
        window: int,
        serial: KeyedSerial,
        delivery: Delivery,
        *,
        turn: Callable[[InboxEntry], Awaitable[list[str]]],
        dry_run: Callable[[Arrival], Awaitable[list[str]]],
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.store = store
        self.window = window
        self.serial = serial
        self.delivery = delivery
        self._turn = turn
        self._dry_run = dry_run
        self.now = now  # the engine's clock: a replayed transcript's time, not the wall's
        self.queued: set[int] = set()  # inbox ids queued or running here (bounded by work)
        self.slowed: set[str] = set()  # chats told to slow down, until their queue empties
        self.refused: OrderedDict[str, float] = OrderedDict()  # chat → when last refused
        self.monotonic: Callable[[], float] = time.monotonic  # for the refusal interval

    async def submit(self, inbound: Inbound) -> Replies | None:
        """Make the message durable, then queue it behind its chat's earlier messages.

        Returns None for a redelivery (already in the inbox): it is not processed again.
        """
        text = valid_text(inbound.text)
        if text != inbound.text:
            inbound = replace(inbound, text=text)
        key = str(inbound.key)
        if not self.settings.is_allowed(inbound.user):
            return self._not_allowed(inbound)
        if self._too_old(inbound):
            return await self._rejected(inbound, "too_old")
        if self.serial.waiting(key) >= self.settings.max_queued_per_chat:
            return await self._over_cap(inbound)
        arrival = Arrival(
            key, inbound.external_id, inbound.user, inbound.kind, inbound.text, inbound.ts
        )
        if commands.is_command(inbound.text):  # stored and answered even in debug mode
            intake = Intake(await self.store.inbox_add(*_fields(arrival)))
        else:  # the chat's turn state is read in the same round trip; the store keeps it
            intake = await self._begin_turn(arrival)
        if intake.debug:  # a dry run writes nothing, not even the inbox entry
            return self.serial.submit(key, lambda: self._dry_run(arrival))
        if intake.entry is None:
            return await self._redelivered(inbound)
        return self.queue(intake.entry)

    async def _begin_turn(self, arrival: Arrival) -> Intake:
        """The store's intake, with operator status checked now: a flag left by an operator
        since revoked is cleared (and the message taken in as any other), not honoured."""
        intake = await self.store.begin_turn(arrival, self.window)
        if not intake.debug or self.settings.is_operator(arrival.user):
            return intake
        log.info("debug_revoked")
        await self.store.set_debug(arrival.key, False, self.now(), arrival.user)
        return await self.store.begin_turn(arrival, self.window)

    def queue(self, entry: InboxEntry) -> Replies:
        self.queued.add(entry.id)
        return self.serial.submit(entry.key, lambda: self._turn(entry))

    def burst_over(self, key: str) -> None:
        """The chat's queue emptied: a new burst may be told to slow down again."""
        if not self.serial.waiting(key):
            self.slowed.discard(key)

    def _too_old(self, inbound: Inbound) -> bool:
        """Older than `VENTANA_DELIVERY_MAX_AGE_HOURS`: a replay, not a late delivery."""
        hours = self.settings.delivery_max_age_hours
        return bool(hours) and inbound.ts < self.now() - timedelta(hours=hours)

    async def _rejected(self, inbound: Inbound, reason: str) -> Replies | None:
        """Acknowledged and recorded as rejected (for dedupe), never answered."""
        key = str(inbound.key)
        if not await self.store.inbox_reject(key, inbound.external_id, reason, inbound.ts):
            return await self._redelivered(inbound)
        log.info("delivery_rejected", key=key, reason=reason)
        return _answered([])

    async def _over_cap(self, inbound: Inbound) -> Replies | None:
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
        if key not in self.slowed:
            self.slowed.add(key)
            texts = [t(self.settings.language, "slow_down", count=self.serial.waiting(key))]
            await self.delivery.send(inbound.key, texts)
        return _answered(texts)

    async def _redelivered(self, inbound: Inbound) -> Replies | None:
        """A redelivery is normally ignored. But if its entry is unfinished and nobody here
        is working on it (the first delivery's intake was interrupted after the commit),
        the redelivery is what gets it answered."""
        key = str(inbound.key)
        entry = await self.store.inbox_get(key, inbound.external_id)
        if entry is None or entry.status == "done" or entry.id in self.queued:
            log.info("duplicate_ignored", key=key, external_id=inbound.external_id)
            return None
        log.info("duplicate_resumed", key=key, external_id=inbound.external_id)
        return self.queue(entry)

    def _not_allowed(self, inbound: Inbound) -> Replies:
        """Refused: told so once per `REFUSAL_INTERVAL_S` per chat; within that a message
        is dropped at once, so a flood from outside the allowlist queues nothing."""
        key, now = str(inbound.key), self.monotonic()
        last = self.refused.get(key)
        if last is not None and now - last < REFUSAL_INTERVAL_S:
            log.info("user_not_allowed", key=key, told=False)
            return _answered([])
        log.info("user_not_allowed", key=key, told=True)
        self.refused[key] = now
        self.refused.move_to_end(key)
        while len(self.refused) > REFUSALS_KEPT:
            self.refused.popitem(last=False)
        return self.serial.submit(key, lambda: self._refuse(inbound))

    async def _refuse(self, inbound: Inbound) -> list[str]:
        texts = [t(self.settings.language, "not_allowed")]
        await self.delivery.send(inbound.key, texts)
        return texts


def _answered(texts: list[str]) -> Replies:
    """A message answered at once, not queued: its replies, already resolved."""
    done: Replies = asyncio.get_running_loop().create_future()
    done.set_result(texts)
    return done


def _fields(arrival: Arrival) -> tuple[str, str, str, str, str, datetime]:
    return (
        arrival.key, arrival.external_id, arrival.user, arrival.kind, arrival.text,
        arrival.received_at,
    )  # fmt: skip
