"""Server-sent event bodies as Anthropic and OpenAI stream them, for fake transports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2

SSE = {"content-type": "text/event-stream"}


def _event(name: str | None, data: Any) -> str:
    head = f"event: {name}\n" if name else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n"


def anthropic_stream(
    deltas: Sequence[str],
    *,
    stop: str = "end_turn",
    usage: tuple[int, int, int] = (40, 12, 8),
    model: str = "claude-sonnet-4-6",
) -> httpx2.Response:
    """A Messages stream of one text block; `usage` is (input, output, cache read)."""
    fresh, output, cached = usage
    message = {
        "id": "msg_stream",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": fresh, "output_tokens": 1, "cache_read_input_tokens": cached},
    }
    block = {"type": "content_block_start", "index": 0}
    delta = {"type": "content_block_delta", "index": 0}
    events = [
        _event("message_start", {"type": "message_start", "message": message}),
        _event("content_block_start", {**block, "content_block": {"type": "text", "text": ""}}),
        *(_event("content_block_delta", {**delta, "delta": _text_delta(d)}) for d in deltas),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return httpx2.Response(200, content="".join(events).encode(), headers=SSE)


def _text_delta(text: str) -> dict[str, str]:
    return {"type": "text_delta", "text": text}


def anthropic_broken_stream(deltas: Sequence[str]) -> httpx2.Response:
    """A stream that starts, then reports an overload mid-way (an `error` event)."""
    good = anthropic_stream(deltas).content.decode().split("event: content_block_stop")[0]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return httpx2.Response(200, content=(good + _event("error", error)).encode(), headers=SSE)


def openai_stream(
    deltas: Sequence[str],
    *,
    finish: str = "stop",
    usage: tuple[int, int, int] = (48, 12, 16),
    model: str = "gpt-4.1-mini",
) -> httpx2.Response:
    """A Chat Completions stream with `include_usage`; `usage` is (prompt, completion, cached)."""
    prompt, completion, cached = usage

    def chunk(delta: dict[str, str], reason: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": model,
                "choices": [choice]}  # fmt: skip

    events = [_event(None, chunk({"role": "assistant", "content": ""}, None))]
    events += [_event(None, chunk({"content": d}, None)) for d in deltas]
    events.append(_event(None, chunk({}, finish)))
    tail = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
    events += [_event(None, tail), _event(None, "[DONE]")]
    return httpx2.Response(200, content="".join(events).encode(), headers=SSE)
