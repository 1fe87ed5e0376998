"""Fakes for provider tests: the one scripted provider endpoint (behind
`httpx.MockTransport`) that fails on any other request, and a recording sleep."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from providers.anthropic import AnthropicChatModel
from providers.base import ChatModel, ChatRequest, Message
from providers.openai import OpenAIChatModel
from providers.retry import Sleep

DATA = Path(__file__).parents[1] / "data" / "providers"
MakeAPI = Callable[..., "FakeAPI"]
Step = (
    httpx2.Response
    | Callable[[httpx2.Request], httpx2.Response]
    | Callable[[httpx2.Request], Awaitable[httpx2.Response]]
)

REQUEST = ChatRequest(
    system="Eres un asistente amable.",
    messages=(
        Message("user", "Hola, ¿me ayudas con la masa madre?"),
        Message("assistant", "¡Claro! ¿Qué necesitas?"),
        Message("user", "¿Qué ingredientes?"),
    ),
    max_tokens=300,
)


def golden(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def answer(status: int, name: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json=golden(name), headers=headers)


def read_timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


def connect_error(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused", request=request)


class FakeAPI:
    """Serves one route from a script, then from `forever` when given; any other request
    (or one past the script) is recorded and fails the test."""

    def __init__(
        self, method: str, path: str, script: Iterable[Step] = (), *, forever: Step | None = None
    ) -> None:
        self.route = (method, path)
        self.script = list(script)
        self.forever = forever
        self.requests: list[httpx2.Request] = []
        self.unexpected: list[str] = []
        self.client = httpx2.AsyncClient(transport=httpx2.MockTransport(self))

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        on_route = (request.method, request.url.path) == self.route
        step = (self.script.pop(0) if self.script else self.forever) if on_route else None
        if step is None:
            self.unexpected.append(f"{request.method} {request.url}")
            return httpx2.Response(599, json={"error": "unexpected request in a test"})
        self.requests.append(request)
        if isinstance(step, httpx2.Response):
            return step
        answer = step(request)
        return await answer if inspect.isawaitable(answer) else answer

    def body(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)

    @property
    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]

    def texts_sent(self, index: int = -1) -> str:
        """Everything one request carried (system and messages), as one string."""
        body = self.body(index)
        parts = [str(body.get("system", ""))]
        for message in body["messages"]:
            content = message["content"]
            parts.append(content if isinstance(content, str) else json.dumps(content))
        return "\n".join(parts)


class RecordingSleep:
    """Stands in for asyncio.sleep: returns at once and remembers each delay."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)  # still a turn of the event loop, as a real sleep is


@dataclass(frozen=True)
class Flavor:
    """One provider as the tests see it: its route, golden reply and constructor, the spec
    an app names it by, and the answers it gives (a reply, an error, an echo)."""

    name: str
    path: str
    ok: str
    build: Callable[[httpx2.AsyncClient, Sleep], ChatModel]
    spec: str

    def reply(self, text: str) -> httpx2.Response:
        if self.name == "anthropic":
            return _json(
                200,
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            )
        return _json(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    async def echo(self, request: httpx2.Request) -> httpx2.Response:
        """A reply that quotes the last message the request carried."""
        last = json.loads(request.content)["messages"][-1]["content"]
        text = last if isinstance(last, str) else " ".join(b["text"] for b in last)
        return self.reply(f"Respuesta a «{text.strip()[:60]}»")

    def error(self, status: int, kind: str, code: str | None = None) -> httpx2.Response:
        if self.name == "anthropic":
            body: Any = {"type": "error", "error": {"type": kind, "message": "fake " + kind}}
        else:
            body = {"error": {"message": "fake " + kind, "type": kind, "code": code}}
        return httpx2.Response(status, json=body)


def _json(status: int, body: Any) -> httpx2.Response:
    """Escaped as a real server would (ensure_ascii), so even a lone surrogate serializes."""
    return httpx2.Response(
        status, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )


def _anthropic(client: httpx2.AsyncClient, sleep: Sleep) -> ChatModel:
    return AnthropicChatModel(
        "claude-sonnet-4-6", api_key="sk-ant-test", http_client=client, sleep=sleep
    )


def _openai(client: httpx2.AsyncClient, sleep: Sleep) -> ChatModel:
    return OpenAIChatModel("gpt-4.1-mini", api_key="sk-test", http_client=client, sleep=sleep)


ANTHROPIC = Flavor(
    "anthropic", "/v1/messages", "anthropic_message", _anthropic, "anthropic:claude-test"
)
OPENAI = Flavor("openai", "/v1/chat/completions", "openai_completion", _openai, "openai:gpt-test")
FLAVORS = [pytest.param(ANTHROPIC, id="anthropic"), pytest.param(OPENAI, id="openai")]
