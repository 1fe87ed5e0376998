"""A tiny real HTTP/1.1 server on 127.0.0.1 that answers from a script and records requests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

_REASONS = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error"}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Scripted:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LoopbackServer:
    script: list[Scripted]
    received: list[Received] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        request_line, *lines = head.strip().split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines)}
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        self.received.append(Received(method, path, headers, json.loads(raw or b"null")))
        reply = self.script.pop(0) if self.script else Scripted(599, {"error": "unscripted"})
        writer.write(_encode(reply))
        await writer.drain()
        writer.close()
        await writer.wait_closed()


def _encode(reply: Scripted) -> bytes:
    payload = json.dumps(reply.body).encode()
    lines = [
        f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in reply.headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


@asynccontextmanager
async def loopback_server(*script: Scripted) -> AsyncIterator[LoopbackServer]:
    state = LoopbackServer(list(script))
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    async with server:
        yield state
