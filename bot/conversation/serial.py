"""Per-key ordering with cross-key concurrency, and nothing kept for idle keys.

Each key with work has one worker task draining its queue in arrival order; the worker
and its queue are dropped as soon as the queue is empty, so memory does not grow with
the number of chats ever seen.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)
Job = Callable[[], Awaitable[Any]]


class KeyedSerial:
    def __init__(self) -> None:
        self._queues: dict[str, deque[tuple[Job, asyncio.Future[Any]]]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}

    def submit(self, key: str, job: Job) -> asyncio.Future[Any]:
        """Queue `job` behind the key's earlier jobs; the future resolves with its result."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(key, deque()).append((job, future))
        if key not in self._workers:
            worker = asyncio.get_running_loop().create_task(self._drain(key), name=f"chat:{key}")
            self._workers[key] = worker
        return future

    async def _drain(self, key: str) -> None:
        queue = self._queues[key]
        try:
            while queue:
                job, future = queue.popleft()
                if future.cancelled():
                    continue
                try:
                    result = await job()
                except asyncio.CancelledError:
                    future.cancel()
                    raise
                except Exception as exc:
                    log.exception("job_failed", key=key)
                    if not future.done():
                        future.set_exception(exc)
                else:
                    if not future.done():
                        future.set_result(result)
        finally:
            self._workers.pop(key, None)
            if not queue:
                self._queues.pop(key, None)
            else:  # cancelled mid-queue: fail what is left rather than hang its waiters
                for _, future in queue:
                    future.cancel()
                self._queues.pop(key, None)

    def waiting(self, key: str) -> int:
        """How many jobs of `key` wait behind the running one."""
        return len(self._queues.get(key, ()))

    def idle(self, key: str) -> bool:
        """Nothing of `key` is queued or running."""
        return key not in self._queues

    @property
    def active_keys(self) -> int:
        return len(self._workers)

    async def drain(self) -> None:
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)

    async def aclose(self) -> None:
        for worker in list(self._workers.values()):
            worker.cancel()
        await asyncio.gather(*list(self._workers.values()), return_exceptions=True)
