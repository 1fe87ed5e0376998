"""One retry policy for every adapter, sized for a chat: a person waits seconds, not minutes.

The SDKs' own retries are switched off (`max_retries=0`) because they know nothing of
our deadline: the Anthropic SDK alone may back off for a minute. Here a reply has one
total deadline; within it we retry at most twice, only errors that can succeed on a
second try, and only when the wait (`retry-after` or a short backoff) still leaves
time for a real attempt.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import structlog

from .base import ProviderError, ProviderTimeout

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Seconds and counts; `deadline` bounds one reply, retries and waits included."""

    deadline: float = 25.0
    attempt_timeout: float = 20.0
    max_retries: int = 2
    # A server asking for more than this is not coming back while the user waits.
    max_retry_after: float = 10.0
    backoff: float = 0.5
    # Never start an attempt with less time than this left: it would only time out.
    min_attempt: float = 2.0
    # Extra time our hard stop gives the SDK, so its own timeout error usually wins.
    grace: float = 0.5


def next_delay(
    error: ProviderError, *, retries_done: int, elapsed: float, policy: RetryPolicy
) -> float | None:
    """Seconds to wait before retrying `error`, or None when a retry cannot help in time."""
    if not error.retryable or retries_done >= policy.max_retries:
        return None
    if error.retry_after is not None:
        # Retrying before the server's date only burns an attempt, so a long
        # retry-after ends the reply now (the error keeps the value for the user).
        if error.retry_after > policy.max_retry_after:
            return None
        delay = error.retry_after
    else:
        delay = policy.backoff * 2**retries_done
    if elapsed + delay + policy.min_attempt > policy.deadline:
        return None
    return delay


async def with_retries(
    attempt: Callable[[float], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
    clock: Clock = time.monotonic,
    may_retry: Callable[[], bool] = lambda: True,
) -> T:
    """Run `attempt(seconds)` until it succeeds or the policy says stop; raise the last error.

    `may_retry() is False` stops retrying too: a streamed reply already shown in part."""
    start = clock()
    retries = 0
    while True:
        remaining = policy.deadline - (clock() - start)
        limit = min(policy.attempt_timeout, remaining)
        # The grace comes out of what is left, so the hard stop never passes the deadline.
        grace = max(0.0, min(policy.grace, remaining - limit))
        try:
            return await _bounded(attempt, limit, grace)
        except ProviderError as error:
            delay = next_delay(error, retries_done=retries, elapsed=clock() - start, policy=policy)
            if delay is None or not may_retry():
                raise
            log.info(
                "provider_retry",
                kind=error.kind,
                status=error.status,
                retry=retries + 1,
                delay_s=delay,
            )
            await sleep(delay)
            retries += 1


async def _bounded(attempt: Callable[[float], Awaitable[T]], time_limit: float, grace: float) -> T:
    # The SDK's timeout is per phase (connect, each read); this is the hard stop.
    try:
        async with asyncio.timeout(time_limit + grace):
            return await attempt(time_limit)
    except TimeoutError as exc:
        raise ProviderTimeout(f"no answer within {time_limit:.1f} s") from exc
