"""Replies of one WhatsApp chat whose first send failed: retried in the background, in order.

Each batch of chunks gets a future: it resolves once the batch is delivered (or refused
for good, which retrying could never change) and fails when Graph kept failing past the
retries, or on shutdown; the conversation handler marks the inbox entry done only when it
resolves, so a failed one is delivered again at the next start and nothing is lost.
"""

from __future__ import annotations

import asyncio
from collections import deque

import structlog

from bot.channels.whatsapp.graph import GraphSender, SendFailed, Sleep

log = structlog.get_logger(__name__)

BACKGROUND_RETRIES = 6  # with the sender's backoff (1, 2, 4 … 30 s): about a minute


class LaterDelivery:
    """One chat's queue of deferred batches and the task that works through it."""

    def __init__(self, graph: GraphSender, wa_id: str, sleep: Sleep) -> None:
        self.graph = graph
        self.wa_id = wa_id
        self.sleep = sleep
        self.batches: deque[tuple[list[str], asyncio.Future[None]]] = deque()
        self.task = asyncio.create_task(self._run(), name="whatsapp:later")

    def add(self, chunks: list[str]) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.batches.append((chunks, future))
        return future

    async def _run(self) -> None:
        try:
            await self.sleep(self.graph.backoff(0))  # after the failed inline attempt
            while self.batches:
                chunks, future = self.batches[0]
                await self._deliver(chunks, future)
                self.batches.popleft()
        except SendFailed as exc:
            log.error("whatsapp_delivery_gave_up", batches=len(self.batches))
            self._fail_all(exc)
        except asyncio.CancelledError:
            self._fail_all(SendFailed("stopped before the reply was delivered"))
            raise

    async def _deliver(self, chunks: list[str], future: asyncio.Future[None]) -> None:
        for chunk in chunks:
            sent = await self.graph.send_chunk(
                self.wa_id, chunk, retries=BACKGROUND_RETRIES, tried=1
            )
            if not sent:
                break  # refused for good (logged): the rest of this batch would be too
        if not future.done():
            future.set_result(None)

    def _fail_all(self, exc: SendFailed) -> None:
        while self.batches:
            _, future = self.batches.popleft()
            if not future.done():
                future.set_exception(exc)
