"""The intake's guards: dry runs as their own job, refusals, deliveries too old."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.conversation.texts import t
from tests.bot.conversation.conftest import Collect, MakeApp, inbound
from tests.support.fakes import ScriptedChatModel


async def test_a_dry_run_is_its_own_job_delivered_without_an_inbox_entry(
    make_app: MakeApp,
) -> None:
    """In debug mode the message is an `Arrival` job: the render reaches the outbox, no
    inbox row exists for it, nothing is queued by id and no done mark is asked for."""
    model = ScriptedChatModel()
    app = await make_app(model, operators=("telegram:1",))
    sent: list[str] = []
    app.handler.register("telegram", Collect(sent))
    await app.handler.handle(inbound("telegram:1", "/debug on"))
    marked: list[int] = []
    delivered = app.store.inbox_delivered
    app.store.inbox_delivered = lambda entry_id, at: marked.append(entry_id)  # type: ignore[method-assign]
    try:
        replies = await app.handler.handle(inbound("telegram:1", "hola", ext="dry-1"))
    finally:
        app.store.inbox_delivered = delivered  # type: ignore[method-assign]
    assert replies
    assert sent[-1] == replies[0]  # the debug render, delivered
    assert not model.requests  # no model call
    assert marked == []  # nothing to mark: it never entered the inbox
    assert await app.store.inbox_get("telegram:1", "dry-1") is None
    assert app.handler.intake.queued == set()


async def test_a_flood_from_outside_the_allowlist_queues_nothing(make_app: MakeApp) -> None:
    """200 messages at once from a sender outside the allowlist: one refusal is sent, the
    rest are dropped at once (nothing waits in the chat's queue, no model call, nothing
    stored); a minute later the chat is told once more."""
    model = ScriptedChatModel()
    app = await make_app(model, allowed_users=("telegram:1",))
    sent: list[str] = []
    app.handler.register("telegram", Collect(sent))
    now = [1000.0]
    app.handler.intake.monotonic = lambda: now[0]
    flood = [inbound("telegram:66", f"spam {n}", ext=f"s{n}") for n in range(200)]
    futures = [await app.handler.submit(message) for message in flood]
    assert app.handler.serial.waiting("telegram:66") <= 1
    results = await asyncio.gather(*(f for f in futures if f is not None))
    refusal = t("es", "not_allowed")
    assert sent == [refusal]
    assert sum(1 for r in results if r) == 1
    assert not model.requests
    assert await app.store.inbox_get("telegram:66", "s0") is None
    now[0] += 61
    assert await app.handler.handle(inbound("telegram:66", "again")) == [refusal]
    assert sent == [refusal, refusal]


async def test_a_delivery_older_than_the_limit_is_recorded_and_never_answered(
    make_app: MakeApp,
) -> None:
    """A message dated 40 days ago (a captured delivery replayed): acknowledged, kept as
    rejected (`too_old`) for dedupe, no reply and no model call. Within the limit (the
    default, 7 days) a late delivery is answered as usual."""
    model = ScriptedChatModel()
    app = await make_app(model)
    sent: list[str] = []
    app.handler.register("telegram", Collect(sent))
    old = inbound("telegram:40", "mi DNI es 12345678Z", ext="old-1")
    old = replace(old, ts=datetime.now(UTC) - timedelta(days=40))
    assert await app.handler.handle(old) == []
    assert sent == []
    assert not model.requests
    entry = await app.store.inbox_get("telegram:40", "old-1")
    assert entry is not None
    assert entry.status == "rejected"
    assert entry.text == ""  # nothing of the message is kept
    late = replace(
        inbound("telegram:40", "hola", ext="late-1"), ts=datetime.now(UTC) - timedelta(days=6)
    )
    assert await app.handler.handle(late)
    assert len(model.requests) == 1
