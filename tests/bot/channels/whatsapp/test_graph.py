"""Sending through the Graph API: splitting, retries, refusals, and no token in logs."""

from __future__ import annotations

import json
import re

import httpx
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from bot.channels.whatsapp.graph import GraphSender, SendFailed, split_text
from tests.support.whatsapp import ACCESS_TOKEN, GRAPH_URL, PHONE_ID, FakeGraph, graph_error


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


PIECES = st.sampled_from(["a", "bc", "palabra", " ", "  ", ".", "!", "?", "…", "\n", "\n\n"])


@given(st.lists(PIECES, max_size=600).map("".join), st.integers(min_value=10, max_value=300))
def test_split_never_exceeds_the_limit_nor_loses_text(text: str, limit: int) -> None:
    """Chunks are non-empty, at most `limit` long, and together hold every character."""
    chunks = split_text(text, limit)
    assert all(0 < len(chunk) <= limit for chunk in chunks)
    assert _squash("".join(chunks)) == _squash(text)


def test_split_prefers_paragraphs_then_sentences() -> None:
    """A paragraph break wins; without one, a sentence end; words stay whole."""
    para = "Primera frase. Segunda frase.\n\nTercera frase aquí."
    assert split_text(para, 40) == ["Primera frase. Segunda frase.", "Tercera frase aquí."]
    sentences = "Una frase corta. Otra frase que sigue. Y una tercera."
    assert split_text(sentences, 40) == [
        "Una frase corta. Otra frase que sigue.",
        "Y una tercera.",
    ]


def test_short_text_is_one_chunk() -> None:
    """Up to 4096 characters go out as they are."""
    text = "x" * 4096
    assert split_text(text) == [text]
    assert len(split_text(text + "y")) == 2


def test_whatsapp_counts_characters_not_utf16_units() -> None:
    """4096 emoji are one WhatsApp message (Telegram, counting UTF-16 units, needs two)."""
    assert split_text("😀" * 4096) == ["😀" * 4096]
    assert [len(chunk) for chunk in split_text("😀" * 5000)] == [4096, 904]


def _sender(graph: FakeGraph, sleeps: list[float]) -> GraphSender:
    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    return GraphSender(
        graph.client,
        graph_url=GRAPH_URL,
        phone_number_id=PHONE_ID,
        token=ACCESS_TOKEN,
        sleep=sleep,
    )


async def test_request_shape(graph: FakeGraph) -> None:
    """A text message to the wa_id, with the bearer token, on the phone number's endpoint."""
    assert await _sender(graph, []).send_text("5491155550101", "Hola")
    [request] = graph.requests
    assert str(request.url) == f"{GRAPH_URL}/{PHONE_ID}/messages"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5491155550101",
        "type": "text",
        "text": {"preview_url": False, "body": "Hola"},
    }


async def test_outside_window_is_not_retried(graph: FakeGraph) -> None:
    """131047 is logged once and never retried; later chunks are not attempted."""
    graph.script = [graph_error("outside_window")]
    sleeps: list[float] = []
    with structlog.testing.capture_logs() as logs:
        delivered = await _sender(graph, sleeps).send_text("5491155550101", "a. " * 3000)
    assert not delivered
    assert len(graph.requests) == 1
    assert sleeps == []
    assert [e["event"] for e in logs] == ["whatsapp_outside_window"]
    assert logs[0]["code"] == 131047


async def test_http_429_is_retried_with_backoff(graph: FakeGraph) -> None:
    """429 twice, then success: two growing delays, then the message goes out."""
    graph.script = [httpx.Response(429), httpx.Response(429)]
    sleeps: list[float] = []
    assert await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert len(graph.requests) == 3
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize("name", ["rate_limited", "pair_rate_limited"])
async def test_throttling_codes_are_retried(graph: FakeGraph, name: str) -> None:
    """Graph throttling codes (130429, 131056) back off like HTTP 429."""
    graph.script = [graph_error(name)]
    sleeps: list[float] = []
    assert await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert (len(graph.requests), sleeps) == (2, [1.0])


async def test_retry_after_is_honoured_and_capped(graph: FakeGraph) -> None:
    """A Retry-After header sets the delay, capped at 30 seconds."""
    graph.script = [
        graph_error("rate_limited", 429, {"Retry-After": "7"}),
        graph_error("rate_limited", 429, {"Retry-After": "3600"}),
    ]
    sleeps: list[float] = []
    assert await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert sleeps == [7.0, 30.0]


async def test_retries_are_bounded(graph: FakeGraph) -> None:
    """Throttled on every try: three retries, then `SendFailed` (the reply stays recoverable)."""
    graph.script = [httpx.Response(429) for _ in range(4)]
    sleeps: list[float] = []
    with pytest.raises(SendFailed):
        await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert (len(graph.requests), sleeps) == (4, [1.0, 2.0, 4.0])


async def test_server_errors_and_network_failures_are_retried(graph: FakeGraph) -> None:
    """A 500 and a dropped connection are transient too."""

    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection reset", request=request)

    graph.script = [httpx.Response(500), drop]
    sleeps: list[float] = []
    assert await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert (len(graph.requests), sleeps) == (3, [1.0, 2.0])


async def test_other_refusals_are_dropped(graph: FakeGraph) -> None:
    """A permanent error (100, invalid parameter) is logged, not retried, not raised."""
    graph.script = [graph_error("invalid_parameter")]
    sleeps: list[float] = []
    with structlog.testing.capture_logs() as logs:
        assert not await _sender(graph, sleeps).send_text("5491155550101", "Hola")
    assert (len(graph.requests), sleeps) == (1, [])
    assert logs[0]["event"] == "whatsapp_send_refused"


async def test_token_never_logged(graph: FakeGraph) -> None:
    """Whatever happens, no log event carries the access token."""

    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection reset", request=request)

    graph.script = [drop, httpx.Response(429), graph_error("outside_window")]
    with structlog.testing.capture_logs() as logs:
        await _sender(graph, []).send_text("5491155550101", "Hola")
    assert len(logs) == 3
    assert ACCESS_TOKEN not in repr(logs)
