"""`run_channels` on a real loopback port: WhatsApp and /healthz served, clean shutdown."""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from bot.channels.run import run_channels
from bot.channels.whatsapp.webhook import sign
from memory.store.sqlite.store import SQLiteStore
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel, eventually, respuesta
from tests.support.whatsapp import (
    APP_SECRET,
    LUCIA,
    VERIFY_TOKEN,
    FakeGraph,
    count_rows,
    golden,
    inbox_statuses,
    make_settings,
)

pytestmark = pytest.mark.usefixtures("clean_env")


async def seed_inbox(db: Path) -> None:
    """Two finished entries: nine days old (to prune) and six days old (to keep)."""
    store = await SQLiteStore.open(db)
    now = datetime.now(UTC)
    for days, wamid in ((9, "wamid.OLD"), (6, "wamid.RECENT")):
        at = now - timedelta(days=days)
        entry = await store.inbox_add(LUCIA, wamid, LUCIA, "text", "hola", at)
        assert entry is not None
        await store.inbox_mark(entry.id, "done", at=at)
    await store.close()


async def test_serves_whatsapp_and_healthz_then_stops_cleanly(tmp_path: Path, port: int) -> None:
    """Real port: health, handshake, a signed message answered; cancel frees the port."""
    db = tmp_path / "ventana.db"
    await seed_inbox(db)
    graph, model, ready = FakeGraph(), ScriptedChatModel(reply=respuesta), asyncio.Event()
    settings = make_settings(db, http_port=port)
    task = asyncio.create_task(
        run_channels(
            settings,
            chat_model=model,
            summary_model=OfflineChatModel(),
            whatsapp_client=graph.client,
            ready=ready,
        )
    )
    await asyncio.wait_for(ready.wait(), 10)
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base, trust_env=False) as client:
        health = await client.get("/healthz")
        assert (health.status_code, health.json()) == (200, {"ok": True})
        params = {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "42"}
        assert (await client.get("/whatsapp/webhook", params=params)).text == "42"
        body = golden("text.json")
        headers = {"X-Hub-Signature-256": sign(APP_SECRET.encode(), body)}
        response = await client.post("/whatsapp/webhook", content=body, headers=headers)
        assert response.status_code == 200
    await eventually(lambda: len(graph.requests) == 1)
    await eventually(lambda: inbox_statuses(db) == ["done", "done"])  # pruned, answered

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with httpx.AsyncClient(trust_env=False) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"{base}/healthz")
    assert len(model.chat_calls) == 1
    assert count_rows(db, "exchanges") == 1
    await graph.client.aclose()
    assert graph.unexpected == []


async def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    """Another process on the port: a ValueError naming it, and the app closed."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        settings = make_settings(tmp_path / "v.db", http_port=port)
        graph = FakeGraph()
        with pytest.raises(ValueError, match=f"127.0.0.1:{port}"):
            await run_channels(
                settings,
                chat_model=ScriptedChatModel(reply=respuesta),
                summary_model=OfflineChatModel(),
                whatsapp_client=graph.client,
            )
        await graph.client.aclose()
