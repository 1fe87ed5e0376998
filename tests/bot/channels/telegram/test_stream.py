"""Streamed replies in Telegram: drafts while the model writes, then the final message."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2

from providers.alerts import ReportingChatModel
from providers.anthropic import AnthropicChatModel
from tests.support.sse import anthropic_broken_stream, anthropic_stream
from tests.support.telegram import telegram_bot

DELTAS = ["Para la masa madre ", "mezcla **harina** ", "y agua, ", "50 g de cada una."]
FULL = "".join(DELTAS)


class SlowSSE:
    """A Messages endpoint that streams its SSE body a little at a time; one route only."""

    def __init__(self, *bodies: httpx2.Response, pause: float = 0.15) -> None:
        self.bodies = list(bodies)
        self.pause = pause
        self.unexpected: list[str] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path != "/v1/messages" or not self.bodies:
            self.unexpected.append(str(request.url))
            return httpx2.Response(599)
        body = self.bodies.pop(0)
        return httpx2.Response(
            body.status_code, headers=body.headers, content=self._paced(body.content)
        )

    async def _paced(self, content: bytes) -> AsyncIterator[bytes]:
        for event in content.split(b"\n\n"):
            if event:
                yield event + b"\n\n"
                await asyncio.sleep(self.pause)


def streaming_model(api: SlowSSE) -> ReportingChatModel:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    return ReportingChatModel(
        AnthropicChatModel("claude-sonnet-4-6", api_key="sk-ant-test", http_client=client)
    )


async def test_private_chat_sees_drafts_before_the_final_message(tmp_path: Path) -> None:
    """Growing drafts reach the chat while the model streams; the final message follows,
    formatted, and the call's usage is stored with the model that answered."""
    api = SlowSSE(anthropic_stream(DELTAS, usage=(40, 12, 8)))
    async with telegram_bot(tmp_path / "v.db", model=streaming_model(api)) as h:
        h.channel.outbox.draft_every = 0.05
        h.fake.push(h.fake.text(5, "¿Cómo empiezo la masa madre?"))
        [final] = await h.wait_replies(5, 1)
        await h.app.handler.drain()
        methods = [m for m in h.fake.methods() if m in ("sendMessageDraft", "sendMessage")]
        assert methods[0] == "sendMessageDraft"
        assert methods[-1] == "sendMessage"
        drafts = [d.text for d in h.fake.drafts if d.chat_id == 5]
        assert len(drafts) >= 2
        assert all(FULL.replace("**", "").startswith(d) for d in drafts)
        assert len(drafts[-1]) > len(drafts[0])
        assert final == FULL.replace("**", "")
        [sent] = h.fake.params_of("sendMessage")
        assert json.loads(sent["entities"])[0]["type"] == "bold"
        [usage] = await h.app.store.usage_totals("telegram:5")
        assert (usage.model, usage.input_tokens, usage.cached_tokens) == (
            "anthropic:claude-sonnet-4-6",
            48,
            8,
        )
    assert api.unexpected == []


async def test_a_stream_that_breaks_ends_in_the_apology(tmp_path: Path) -> None:
    """A reply that fails after showing a draft is not retried, and the final message is
    the usual apology, never the half text."""
    api = SlowSSE(anthropic_broken_stream(["Empiezo a explicarte"]))
    async with telegram_bot(tmp_path / "v.db", model=streaming_model(api)) as h:
        h.channel.outbox.draft_every = 0.01
        h.fake.push(h.fake.text(5, "explícame"))
        [final] = await h.wait_replies(5, 1)
        assert any(d.text == "Empiezo a explicarte" for d in h.fake.drafts)
        assert "Empiezo" not in final
        [row] = await h.exchanges("telegram:5")
        assert row["signal"] in (0, False)
    assert api.unexpected == []


async def test_groups_and_streaming_off_get_no_drafts(tmp_path: Path) -> None:
    """A group never streams; with VENTANA_STREAMING=off a private chat does not either."""
    api = SlowSSE(anthropic_stream(DELTAS), anthropic_stream(DELTAS), pause=0.01)
    async with telegram_bot(tmp_path / "v.db", model=streaming_model(api)) as h:
        mention = [{"type": "mention", "offset": 0, "length": len("@ventana_bot")}]
        h.fake.push(h.fake.text(-100, "@ventana_bot hola", user_id=42, entities=mention))
        await h.wait_replies(-100, 1)
        h.channel.outbox.streaming = False
        h.fake.push(h.fake.text(5, "hola"))
        await h.wait_replies(5, 1)
        assert h.fake.drafts == []


async def test_streaming_setting_reaches_the_outbox(tmp_path: Path) -> None:
    """VENTANA_STREAMING=off builds a Telegram outbox that does not stream."""
    async with telegram_bot(tmp_path / "v.db", start=False, streaming="off") as h:
        assert h.channel.outbox.streaming is False
    async with telegram_bot(tmp_path / "w.db", start=False) as h:
        assert h.channel.outbox.streaming is True
