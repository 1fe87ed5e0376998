"""The retry policy: pure decisions, and the loop that applies them within a deadline."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from providers import base
from providers.retry import RetryPolicy, next_delay, with_retries
from tests.support.provider_api import RecordingSleep

POLICY = RetryPolicy()
NEVER_RETRIED = [
    base.AuthenticationFailed,
    base.BadRequest,
    base.ContextTooLong,
    base.QuotaExhausted,
]
RETRIED = [base.RateLimited, base.Overloaded, base.ProviderTimeout, base.ProviderUnavailable]


@pytest.mark.parametrize("error", NEVER_RETRIED)
def test_errors_that_cannot_succeed_are_not_retried(error: type[base.ProviderError]) -> None:
    """Auth, bad request, context too long and quota end the reply at once."""
    assert next_delay(error(), retries_done=0, elapsed=0.0, policy=POLICY) is None


@pytest.mark.parametrize("error", RETRIED)
def test_transient_errors_back_off_then_stop(error: type[base.ProviderError]) -> None:
    """Transient errors wait 0.5 s, then 1 s, then give up after two retries."""
    delays = [next_delay(error(), retries_done=n, elapsed=0.0, policy=POLICY) for n in range(3)]
    assert delays == [0.5, 1.0, None]


@pytest.mark.parametrize(
    ("retry_after", "elapsed", "expected"),
    [
        (3.0, 0.0, 3.0),  # honoured as given
        (10.0, 0.0, 10.0),  # at the cap
        (10.5, 0.0, None),  # beyond the cap: not worth waiting in a chat
        (3.0, 21.0, None),  # would leave no time for the attempt before the deadline
        (0.0, 0.0, 0.0),
    ],
)
def test_retry_after_is_honoured_within_cap_and_deadline(
    retry_after: float, elapsed: float, expected: float | None
) -> None:
    """The server's wait is used as is, unless it passes the cap or the deadline."""
    error = base.RateLimited(retry_after=retry_after)
    assert next_delay(error, retries_done=0, elapsed=elapsed, policy=POLICY) == expected


@given(
    kind=st.sampled_from(NEVER_RETRIED + RETRIED),
    retry_after=st.none() | st.floats(min_value=0, max_value=120),
    retries_done=st.integers(min_value=0, max_value=5),
    elapsed=st.floats(min_value=0, max_value=60),
)
def test_a_retry_always_fits_the_deadline(
    kind: type[base.ProviderError], retry_after: float | None, retries_done: int, elapsed: float
) -> None:
    """Whatever happens, a retry leaves a real attempt's time before the deadline."""
    error = kind(retry_after=retry_after)
    delay = next_delay(error, retries_done=retries_done, elapsed=elapsed, policy=POLICY)
    if delay is not None:
        assert error.retryable
        assert retries_done < POLICY.max_retries
        assert elapsed + delay + POLICY.min_attempt <= POLICY.deadline
        assert delay <= POLICY.max_retry_after


async def test_loop_retries_then_returns(sleep: RecordingSleep) -> None:
    """Failures the policy retries are tried again; the first success is returned."""
    outcomes: list[base.ProviderError | str] = [
        base.ProviderUnavailable(),
        base.Overloaded(),
        "done",
    ]
    limits: list[float] = []

    async def attempt(seconds: float) -> str:
        limits.append(seconds)
        outcome = outcomes.pop(0)
        if isinstance(outcome, base.ProviderError):
            raise outcome
        return outcome

    assert await with_retries(attempt, POLICY, sleep=sleep) == "done"
    assert sleep.delays == [0.5, 1.0]
    assert limits[0] == POLICY.attempt_timeout


async def test_loop_gives_a_late_attempt_only_the_time_left() -> None:
    """Each attempt's timeout is the smaller of the attempt timeout and the time left."""
    now = [0.0]
    limits: list[float] = []

    async def attempt(seconds: float) -> str:
        limits.append(seconds)
        now[0] += 15.0  # each failed try costs 15 s of the (fake) clock
        raise base.ProviderUnavailable()

    async def clock_sleep(seconds: float) -> None:
        now[0] += seconds

    policy = RetryPolicy(deadline=25.0, attempt_timeout=20.0)
    with pytest.raises(base.ProviderUnavailable):
        await with_retries(attempt, policy, sleep=clock_sleep, clock=lambda: now[0])
    # 15 s + 0.5 s backoff leaves 9.5 s; after 30.5 s nothing is left for a third try.
    assert limits == [20.0, 9.5]


async def test_hard_deadline_stops_a_hanging_attempt() -> None:
    """An attempt that never answers is cut at its time limit and reported as a timeout."""
    policy = RetryPolicy(deadline=0.2, attempt_timeout=0.05, grace=0.0, min_attempt=1.0)

    async def attempt(seconds: float) -> str:
        await asyncio.sleep(10)
        return "never"

    with pytest.raises(base.ProviderTimeout):
        await asyncio.wait_for(with_retries(attempt, policy), timeout=2)


async def test_non_provider_errors_pass_through(sleep: RecordingSleep) -> None:
    """A bug (not a provider failure) is neither retried nor disguised."""

    async def attempt(seconds: float) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await with_retries(attempt, POLICY, sleep=sleep)
    assert sleep.delays == []
