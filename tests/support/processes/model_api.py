"""The one loopback LLM server: a fake OpenAI-compatible Chat Completions endpoint.

Scripted (`script=[Scripted(...)]`), it answers each request with the next scripted
status, body and headers; an unscripted request is a failure. Otherwise a chat request is
answered with a reply that names the user message (`u<update_id>`), a fold request (one
with a `<transcript>` block) with a short summary that keeps every `#id` of the previous
summary and the transcript. Latency is small and seeded; `faults` fail chosen calls.
"""

from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support.processes.loopback import LoopbackServer, Received, Reply

PATH = "/v1/chat/completions"
_MARKER = re.compile(r"\bu\d+\b")
_IDS = re.compile(r"#\d+")
_PREVIOUS = re.compile(r"<previous_summary>\n(.*?)\n</previous_summary>", re.DOTALL)


@dataclass(frozen=True)
class Scripted:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeModel:
    script: list[Scripted] | None = None
    seed: int = 0
    min_latency: float = 0.005
    max_latency: float = 0.06
    faults: dict[int, int] = field(default_factory=dict)  # call number -> HTTP status
    requests: list[dict[str, Any]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    in_flight: int = 0
    folds: int = 0
    _calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self.server = LoopbackServer(self._route)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/v1"

    @property
    def received(self) -> list[Received]:
        return self.server.received

    def _route(self, verb: str, path: str, _params: dict[str, str], body: Any) -> Reply:
        if verb != "POST" or path != PATH or not isinstance(body, dict):
            with self._lock:
                self.unexpected.append(f"{verb} {path}")
            return 404, {"error": {"message": "not found", "type": "invalid_request_error"}}, {}
        with self._lock:
            self._calls += 1
            self.requests.append(body)
            fault = self.faults.get(self._calls)
            delay = self._rng.uniform(self.min_latency, self.max_latency)
            self.in_flight += 1
        try:
            time.sleep(delay)
            if fault is not None:
                return fault, _error(fault), {"retry-after": "0"} if fault == 429 else {}
            if self.script is not None:
                return self._scripted(verb, path)
            return 200, self._completion(body), {}
        finally:
            with self._lock:
                self.in_flight -= 1

    def _scripted(self, verb: str, path: str) -> Reply:
        with self._lock:
            if not self.script:
                self.unexpected.append(f"{verb} {path} (unscripted)")
                return 599, {"error": "unscripted"}, {}
            reply = self.script.pop(0)
        return reply.status, reply.body, reply.headers

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        last = str(messages[-1]["content"])
        if "<transcript>" in last:
            with self._lock:
                self.folds += 1
            text = fold_summary(last)
        else:
            markers = _MARKER.findall(last)
            named = markers[-1] if markers else f"«{last[:40]}»"
            text = f"Anotado {named}: queda registrado, gracias."
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": str(body.get("model", "fake")),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def fold_summary(fold_input: str) -> str:
    """A plausible cumulative summary: one sentence listing every order id seen so far."""
    previous = _PREVIOUS.search(fold_input)
    ids = _IDS.findall(previous.group(1)) if previous else []
    ids += _IDS.findall(fold_input.split("<transcript>", 1)[1])
    listed = ", ".join(dict.fromkeys(ids))
    return (
        "Hechos confirmados: el usuario registró sus pedidos y el asistente confirmó cada "
        f"uno de ellos. Pedidos registrados hasta ahora: {listed}."
    )


def _error(status: int) -> dict[str, Any]:
    kind = "rate_limit_error" if status == 429 else "server_error"
    return {"error": {"message": "fake failure", "type": kind, "code": None}}
