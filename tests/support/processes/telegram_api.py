"""A fake Telegram Bot API for a bot running in another process.

Base URLs look like `http://127.0.0.1:<port>/g<generation>/bot`, so every request names
the bot process (generation) that sent it, even one that arrives after a SIGKILL. Updates
are served from a queue honouring `offset` the way Telegram does: an update counts as
*confirmed* once a getUpdates call arrives with an offset past it, and is then forgotten;
an unconfirmed update is served again to the next process. Anything unexpected (another
method, another token, a malformed call) is recorded and fails the test.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support.processes.loopback import LoopbackServer, Reply

TOKEN = "123:TEST"
BOT = {"id": 999, "is_bot": True, "first_name": "Ventana", "username": "ventana_bot"}
MAX_BATCH = 5  # updates per getUpdates answer: several round trips under load
LONG_POLL_S = 0.25  # shorter than Telegram's, so the fake's threads finish quickly
_PATH = re.compile(r"^/g(\d+)/bot([^/]+)/(\w+)$")


@dataclass(frozen=True)
class Sent:
    generation: int
    chat_id: int
    text: str


@dataclass
class FakeTelegram:
    """Thread-safe: the HTTP threads and the test thread share it under one condition."""

    token: str = TOKEN
    fail_send: dict[int, int] = field(default_factory=dict)  # sendMessage call no -> status
    texts: dict[int, tuple[int, str]] = field(default_factory=dict)  # update_id -> chat, text
    confirmed: set[int] = field(default_factory=set)
    sent: list[Sent] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    polls: dict[int, int] = field(default_factory=dict)  # generation -> getUpdates calls
    _queue: list[dict[str, Any]] = field(default_factory=list)
    _next_update: int = 1000
    _next_message: int = 1
    _send_calls: int = 0
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        self.server = LoopbackServer(self._route)

    def base_url(self, generation: int) -> str:
        return f"http://127.0.0.1:{self.server.port}/g{generation}/bot"

    # -- the test's side ------------------------------------------------------------------

    def push_text(self, chat_id: int, text: str | None = None) -> int:
        """Queue a private text message; returns its update_id."""
        with self._cond:
            self._next_update += 1
            update_id = self._next_update
            body = text if text is not None else f"u{update_id} mi pedido es #{update_id}"
            self.texts[update_id] = (chat_id, body)
            self._queue.append(_update(update_id, self._next_message, chat_id, body))
            self._next_message += 1
            self._cond.notify_all()
        return update_id

    def snapshot(self) -> tuple[set[int], list[Sent]]:
        with self._cond:
            return set(self.confirmed), list(self.sent)

    def poll_count(self, generation: int) -> int:
        with self._cond:
            return self.polls.get(generation, 0)

    def replies_to(self, update_id: int) -> list[Sent]:
        chat_id, _ = self.texts[update_id]
        marker = re.compile(rf"\bu{update_id}\b")
        with self._cond:
            return [s for s in self.sent if s.chat_id == chat_id and marker.search(s.text)]

    # -- the Bot API ------------------------------------------------------------------------

    def _route(self, verb: str, path: str, params: dict[str, str], body: Any) -> Reply:
        match = _PATH.match(path)
        if verb != "POST" or match is None or match.group(2) != self.token:
            return self._unexpected(f"{verb} {path}")
        generation, method = int(match.group(1)), match.group(3)
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            return self._unexpected(method)
        result = handler(generation, params)
        if isinstance(result, tuple):
            return result
        return 200, {"ok": True, "result": result}, {}

    def _unexpected(self, what: str) -> Reply:
        with self._cond:
            self.unexpected.append(what)
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}, {}

    def _api_getMe(self, _generation: int, _params: dict[str, str]) -> Any:
        return BOT

    def _api_setMyCommands(self, _generation: int, _params: dict[str, str]) -> Any:
        return True

    def _api_deleteWebhook(self, _generation: int, _params: dict[str, str]) -> Any:
        return True

    def _api_sendMessageDraft(self, _generation: int, params: dict[str, str]) -> Any:
        int(params["chat_id"])  # a streamed preview; only the final message counts
        return True

    def _api_sendChatAction(self, _generation: int, params: dict[str, str]) -> Any:
        int(params["chat_id"])
        return True

    def _api_getUpdates(self, generation: int, params: dict[str, str]) -> Any:
        offset = int(params["offset"]) if "offset" in params else None
        wait = min(float(params.get("timeout", 0)), LONG_POLL_S)
        with self._cond:
            self.polls[generation] = self.polls.get(generation, 0) + 1
            if offset is not None:
                self.confirmed.update(
                    u["update_id"] for u in self._queue if u["update_id"] < offset
                )
                self._queue = [u for u in self._queue if u["update_id"] >= offset]
            deadline = time.monotonic() + wait
            while not self._queue and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return list(self._queue[:MAX_BATCH])

    def _api_sendMessage(self, generation: int, params: dict[str, str]) -> Any:
        chat_id, text = int(params["chat_id"]), params["text"]
        with self._cond:
            self._send_calls += 1
            status = self.fail_send.get(self._send_calls)
            if status is not None:
                return status, _error(status), {}
            self.sent.append(Sent(generation, chat_id, text))
            self._next_message += 1
            message_id = self._next_message
        chat = {"id": chat_id, "type": "private", "first_name": "Ana"}
        return {"message_id": message_id, "date": int(time.time()), "chat": chat, "text": text}


def _update(update_id: int, message_id: int, chat_id: int, text: str) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private", "first_name": "Ana"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Ana"},
            "text": text,
        },
    }


def _error(status: int) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": "fake failure"}
    if status == 429:
        body["parameters"] = {"retry_after": 1}
    return body
