"""The reply size cap: a model (or a server posing as one) that ignores `max_tokens` must
not turn one turn into thousands of messages or a row of megabytes.

A reply past `max_chars` is cut there and marked truncated and `capped`; what comes after
is never read: a non-streamed body is read through a byte limit (the most a reply of
`max_chars` can take in JSON, escapes included, plus its envelope), a stream is dropped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from .base import ChatReply, ProviderTimeout, ProviderUnavailable, Usage

DEFAULT_REPLY_MAX_CHARS = 16_000
_JSON_BYTES_PER_CHAR = 12  # the worst JSON escape: a surrogate pair, two \uXXXX
_ENVELOPE_BYTES = 64 * 1024  # ids, usage, stop reason around the text


def body_limit(max_chars: int) -> int:
    """The most bytes a JSON reply body of `max_chars` of text can take."""
    return max_chars * _JSON_BYTES_PER_CHAR + _ENVELOPE_BYTES


async def read_within(chunks: AsyncIterator[bytes], limit: int, provider: str) -> bytes | None:
    """The whole body, or None as soon as it grows past `limit` (the rest is not read).
    The SDK no longer reads it for us, so a failed read is mapped here."""
    body = bytearray()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) > limit:
                return None
    except httpx2.TimeoutException as exc:
        raise ProviderTimeout(f"{provider}: reading the reply timed out") from exc
    except httpx2.HTTPError as exc:
        raise ProviderUnavailable(f"{provider}: reading the reply failed") from exc
    return bytes(body)


def json_object(body: bytes, provider: str) -> dict[str, Any]:
    """A reply body as the JSON object it must be."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ProviderUnavailable(f"{provider}: unreadable response") from exc
    if not isinstance(data, dict):
        raise ProviderUnavailable(f"{provider}: malformed response")
    return data


def capped(text: str, max_chars: int, model: str, usage: Usage | None = None) -> ChatReply:
    """What a reply over the cap becomes: its first `max_chars`, truncated and capped."""
    return ChatReply(text[:max_chars], "max_tokens", usage or Usage(), model, capped=True)
