"""Shared pieces of the benchmarks: fake models, settings, percentiles, target lines."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import structlog

from bot.app import App
from config.settings import Settings, load_settings
from providers.base import ChatReply, ChatRequest, Usage

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Target:
    """One figure with its target; `better` is "low" or "high"."""

    bench: str
    name: str
    value: float
    limit: float
    better: str
    shown: str
    limit_shown: str = ""  # the target as people read it; default: like `shown`

    @property
    def passed(self) -> bool:
        return self.value <= self.limit if self.better == "low" else self.value >= self.limit

    def line(self) -> str:
        op = "≤" if self.better == "low" else "≥"
        mark = "PASS" if self.passed else "MISS"
        figure = f"{self.name:<46} {self.shown:>12}"
        limit = self.limit_shown or (
            f"{self.limit:.0%}" if self.shown.endswith("%") else f"{self.limit:g}"
        )
        return f"{mark}  {self.bench:<11} {figure}  target {op} {limit}"


class FastChat:
    """A zero-latency chat model: a distinct, plausible reply per call (never noise)."""

    name = "bench-fast"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls = 0
        self.requests: list[ChatRequest] = []
        self.keep = False  # record requests (the token benchmark reads them)

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.calls += 1
        if self.keep:
            self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        last = request.messages[-1].content if request.messages else ""
        text = (
            f"Gracias, anoto lo que comentas ({len(last)} caracteres) en la respuesta "
            f"{self.calls}. Revisamos el caso y te confirmamos el siguiente paso."
        )
        return ChatReply(text, "end", Usage(0, 0), self.name)


class SleepySummaryModel:
    """A summary model that takes `delay` seconds and returns a short plausible summary."""

    name = "bench-summary"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.calls += 1
        await asyncio.sleep(self.delay)
        # Echo the facts block back, so the fact guard is satisfied without a retry.
        body = request.messages[-1].content if request.messages else ""
        text = "Resumen: el cliente consulta por su caso; se registran sus mensajes.\n" + body[
            -600:
        ].replace("<", "(")
        return ChatReply(text, "end", Usage(len(body) // 4, len(text) // 4), self.name)


def quiet_logs() -> None:
    """Warnings only: a log line per turn would measure the terminal, not the bot."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=logging.WARNING, force=True)


def bench_args(
    doc: str | None,
    argv: Sequence[str] | None,
    options: Mapping[str, int | float],
    *,
    quick: Mapping[str, int | float],
    quick_help: str,
    helps: Mapping[str, str] | None = None,
) -> argparse.Namespace:
    """A bench's command line: one `--name` per option (its default's type), and `--quick`
    setting the `quick` values of options not given; logs are quieted, as every bench
    wants."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    for name, default in options.items():
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, type=type(default), help=(helps or {}).get(name))
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    for name, default in options.items():  # --quick sets only what is not given
        if getattr(args, name) is None:
            setattr(args, name, quick.get(name, default) if args.quick else default)
    quiet_logs()
    return args


def bench_settings(db: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "db": db,
        "chat_model": "offline",
        "summary_model": "offline",
        "log_level": "warning",
        # The benches' messages are dated from a fixed T0 (`ts`), replayed as it were:
        # no delivery age limit for them.
        "delivery_max_age_hours": 0,
    }
    base.update(overrides)
    return load_settings(**base)


async def build_app(settings: Settings, chat: Any, summary: Any | None = None) -> App:
    from providers.offline import OfflineChatModel

    return await App.build(
        settings,
        db=settings.db,
        chat_model=chat,
        summary_model=summary if summary is not None else OfflineChatModel(),
    )


def ts(turn: int) -> datetime:
    return T0 + timedelta(seconds=turn)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


# The store time of the turn in progress, per chat driver (copied into the chat's task).
spent_by_turn: ContextVar[list[float]] = ContextVar("store_spent")


class TimedStore:
    """Wraps a store: every call's duration is added to the current turn's account."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "claim_turn":
            return self._timed_claim(value)
        if inspect.iscoroutinefunction(value):
            return self._timed(name, value)
        return value

    by_method: ClassVar[dict[str, float]] = {}  # seconds per store method, this process

    @classmethod
    def _account(cls, started: float, name: str = "claim_turn") -> None:
        took = time.perf_counter() - started
        cls.by_method[name] = cls.by_method.get(name, 0.0) + took
        spent = spent_by_turn.get(None)
        if spent is not None:
            spent[0] += took

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self._account(started, name)

        return call

    def _timed_claim(self, claim: Callable[..., Any]) -> Callable[..., Any]:
        @asynccontextmanager
        async def timed(entry: Any) -> AsyncIterator[Any]:
            started = time.perf_counter()
            manager = claim(entry)
            entries = await manager.__aenter__()
            self._account(started)
            try:
                yield entries
            except BaseException as exc:
                if not await manager.__aexit__(type(exc), exc, exc.__traceback__):
                    raise
            else:
                started = time.perf_counter()
                await manager.__aexit__(None, None, None)
                self._account(started)

        return timed
