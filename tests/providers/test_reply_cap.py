"""The reply size cap: a reply past `reply_max_chars` is cut there, marked truncated and
capped, and the rest of the response is never read (streamed or not, both SDKs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from providers.anthropic import AnthropicChatModel
from providers.base import ChatModel, ChatReply
from providers.openai import OpenAIChatModel
from providers.streaming import StreamingChatModel
from tests.support.provider_api import ANTHROPIC, OPENAI, REQUEST, MakeAPI
from tests.support.sse import SSE

CAP = 1_000
CHUNKS = 5_000  # of 1,000 characters each: a 5 MB reply
PIECE = "palabra " * 125


class Body(httpx2.AsyncByteStream):
    """A response body made on demand, counting how many of its chunks were read."""

    def __init__(self, head: str, piece: Callable[[], str], tail: str) -> None:
        self.head, self.piece, self.tail = head, piece, tail
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head.encode()
        for _ in range(CHUNKS):
            self.read += 1
            yield self.piece().encode()
            await asyncio.sleep(0)
        yield self.tail.encode()


def _json_body(flavor: str) -> Body:
    """A non-streamed reply whose text field is CHUNKS pieces long."""
    if flavor == "anthropic":
        head = '{"id":"m","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"'  # noqa: E501
        tail = '"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}'
    else:
        head = '{"id":"c","object":"chat.completion","created":0,"model":"g","choices":[{"index":0,"message":{"role":"assistant","content":"'  # noqa: E501
        tail = '"},"finish_reason":"stop"}]}'
    return Body(head, lambda: PIECE, tail)


def _sse_body(flavor: str) -> Body:
    """A streamed reply of CHUNKS deltas (its end never needed)."""
    if flavor == "anthropic":
        message = {"id": "m", "type": "message", "role": "assistant", "model": "c",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
        head = (
            f"event: message_start\ndata: {json.dumps({'type': 'message_start', 'message': message})}\n\n"  # noqa: E501
            'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            '"content_block":{"type":"text","text":""}}\n\n'
        )
        delta = {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": PIECE}}  # fmt: skip
        piece = f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n"
        tail = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    else:
        chunk: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 1,
                                 "model": "g", "choices": [{"index": 0,
                                 "delta": {"content": PIECE}, "finish_reason": None}]}  # fmt: skip
        head, piece, tail = "", f"data: {json.dumps(chunk)}\n\n", "data: [DONE]\n\n"
    return Body(head, lambda: piece, tail)


def _model(flavor: str, client: httpx2.AsyncClient) -> ChatModel:
    if flavor == "anthropic":
        return AnthropicChatModel("c", api_key="sk-ant-t", http_client=client, reply_max_chars=CAP)
    return OpenAIChatModel("g", api_key="sk-t", http_client=client, reply_max_chars=CAP)


def _path(flavor: str) -> str:
    return ANTHROPIC.path if flavor == "anthropic" else OPENAI.path


def _assert_capped(reply: ChatReply, body: Body) -> None:
    assert len(reply.text) <= CAP
    assert reply.stop_reason == "max_tokens"
    assert reply.capped
    assert body.read < CHUNKS // 10, "the response was read well past the cap"


@pytest.mark.parametrize("flavor", ["anthropic", "openai"])
async def test_a_huge_reply_is_capped_and_not_read_to_its_end(
    fake_api: MakeAPI, flavor: str
) -> None:
    """A 5 MB non-streamed reply: cut at the cap, marked truncated, most of it never read."""
    body = _json_body(flavor)
    headers = {"content-type": "application/json"}
    api = fake_api("POST", _path(flavor), httpx2.Response(200, stream=body, headers=headers))
    reply = await _model(flavor, api.client).complete(REQUEST)
    _assert_capped(reply, body)


@pytest.mark.parametrize("flavor", ["anthropic", "openai"])
async def test_a_huge_streamed_reply_stops_at_the_cap(fake_api: MakeAPI, flavor: str) -> None:
    """Streamed: the text shown and returned stops at the cap and the stream is dropped."""
    body = _sse_body(flavor)
    api = fake_api("POST", _path(flavor), httpx2.Response(200, stream=body, headers=SSE))
    model = _model(flavor, api.client)
    assert isinstance(model, StreamingChatModel)
    shown: list[int] = []

    async def on_text(text: str) -> None:
        shown.append(len(text))

    reply = await model.stream(REQUEST, on_text)
    _assert_capped(reply, body)
    assert max(shown) <= CAP


@pytest.mark.parametrize("flavor", ["anthropic", "openai"])
async def test_a_reply_under_the_cap_is_untouched(fake_api: MakeAPI, flavor: str) -> None:
    """Below the cap nothing changes: the whole text, its own stop reason, not capped."""
    reply_of = ANTHROPIC if flavor == "anthropic" else OPENAI
    api = fake_api("POST", _path(flavor), reply_of.reply("hola " * 100))
    reply = await _model(flavor, api.client).complete(REQUEST)
    assert reply.text == "hola " * 100
    assert reply.stop_reason == "end"
    assert not reply.capped
