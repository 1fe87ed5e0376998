"""The one fake Telegram Bot API: its methods, update queue and recording, written once.

Two ways in: `transport()` (an `httpx.MockTransport`, for a bot in this process) and
`server` (a loopback HTTP server, for a bot in another process). Loopback base URLs look
like `http://127.0.0.1:<port>/g<generation>/bot`, so every request names the bot process
(generation) that sent it, even one arriving after a SIGKILL. Updates are served the way
Telegram does: an update is *confirmed* once a getUpdates call arrives with an offset past
it, and is then forgotten; an unconfirmed one is served again. Anything unexpected
(another method, another token, a malformed path) is recorded and fails the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx

from tests.support.processes.loopback import LoopbackServer, Reply

TOKEN = "123456:TEST-token"
BOT_ID = 999
BOT_USERNAME = "ventana_bot"
LOOPBACK_BATCH = 5  # updates per getUpdates answer on loopback: several round trips
LOOPBACK_POLL_S = 0.25  # the longest loopback long poll, so the fake's threads end quickly
_PATH = re.compile(r"^(?:/g(\d+))?/bot([^/]+)/(\w+)$")
_NOT_FOUND = {"ok": False, "error_code": 404, "description": "Not Found"}
_RIGHTS = ("can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages",
           "can_manage_video_chats", "can_restrict_members", "can_promote_members",
           "can_change_info", "can_invite_users", "can_post_stories", "can_edit_stories",
           "can_delete_stories")  # fmt: skip


@dataclass(frozen=True)
class Sent:
    chat_id: int
    text: str
    params: dict[str, str] = field(default_factory=dict, compare=False)
    generation: int = 0


@dataclass(frozen=True)
class Refused:
    """The answer to a call that is not served: unexpected, or failed by script."""

    status: int
    body: dict[str, Any]


@dataclass
class FakeBotAPI:
    """Serves scripted updates and records every call; any other method is a failure.
    Thread-safe: loopback HTTP threads and the test share it under one condition."""

    token: str = TOKEN
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    drafts: list[Sent] = field(default_factory=list)
    offsets: list[int | None] = field(default_factory=list)
    confirmed: set[int] = field(default_factory=set)
    polls: dict[int, int] = field(default_factory=dict)  # generation -> getUpdates calls
    unexpected: list[str] = field(default_factory=list)
    errors: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    fail_send: dict[int, int] = field(default_factory=dict)  # sendMessage call no -> status
    texts: dict[int, tuple[int, str]] = field(default_factory=dict)  # update_id -> chat, text
    on_get_updates: Callable[[int | None], Awaitable[None]] | None = None
    next_update_id: int = 1000
    admins: dict[int, str] = field(default_factory=dict)  # user id → "creator"/"administrator"
    next_message_id: int = 1
    _send_calls: int = 0
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    # -- the two ways in ----------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    @functools.cached_property
    def server(self) -> LoopbackServer:
        """The loopback server (bound on first use; start and stop it, or use `with`)."""
        return LoopbackServer(self._route)

    def base_url(self, generation: int) -> str:
        return f"http://127.0.0.1:{self.server.port}/g{generation}/bot"

    # -- scripting ----------------------------------------------------------------------

    def push(self, *updates: dict[str, Any]) -> None:
        with self._cond:
            self.pending.extend(updates)
            self._cond.notify_all()
        self._wake.set()

    def push_text(self, chat_id: int, text: str | None = None) -> int:
        """Queue a private text message (by default one naming `u<update_id>` and an
        order id); returns its update_id. Thread-safe, for a bot in another process."""
        with self._cond:
            update = self.update({})
            update_id = update["update_id"]
            body = text if text is not None else f"u{update_id} mi pedido es #{update_id}"
            update["message"] = self.message(chat_id, body)
            self.texts[update_id] = (chat_id, body)
            self.push(update)
        return update_id

    def fail_next(self, method: str, code: int, description: str, **parameters: Any) -> None:
        body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        self.errors.setdefault(method, []).append(body)

    def update(self, message: dict[str, Any], *, kind: str = "message") -> dict[str, Any]:
        self.next_update_id += 1
        return {"update_id": self.next_update_id, kind: message}

    def message(
        self,
        chat_id: int,
        text: str | None = None,
        *,
        user_id: int | None = None,
        chat_type: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        user_id = chat_id if user_id is None else user_id
        chat_type = chat_type or ("private" if chat_id > 0 else "supergroup")
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        chat.update({"first_name": "Ana"} if chat_type == "private" else {"title": "Team"})
        self.next_message_id += 1
        message: dict[str, Any] = {
            "message_id": self.next_message_id,
            "date": int(time.time()),
            "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"},
        }
        if text is not None:
            message["text"] = text
        message.update(extra)
        return message

    def text(self, chat_id: int, text: str, **kw: Any) -> dict[str, Any]:
        """A whole update carrying one text message."""
        return self.update(self.message(chat_id, text, **kw))

    # -- reading ------------------------------------------------------------------------

    def texts_to(self, chat_id: int) -> list[str]:
        return [s.text for s in self.sent if s.chat_id == chat_id]

    def methods(self) -> list[str]:
        return [name for name, _ in self.calls]

    def params_of(self, method: str) -> list[dict[str, str]]:
        return [params for name, params in self.calls if name == method]

    def snapshot(self) -> tuple[set[int], list[Sent]]:
        with self._cond:
            return set(self.confirmed), list(self.sent)

    def poll_count(self, generation: int) -> int:
        with self._cond:
            return self.polls.get(generation, 0)

    def replies_to(self, update_id: int) -> list[Sent]:
        """What was sent to the update's chat naming its `u<update_id>` marker."""
        chat_id, _ = self.texts[update_id]
        marker = re.compile(rf"\bu{update_id}\b")
        with self._cond:
            return [s for s in self.sent if s.chat_id == chat_id and marker.search(s.text)]

    # -- transports: each only translates -------------------------------------------------

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        params = {k: v[0] for k, v in parse_qs(request.content.decode(), True).items()}
        called = self._called(request.method, request.url.path, params)
        if isinstance(called, Refused):
            return httpx.Response(called.status, json=called.body)
        generation, method = called
        if method == "getUpdates":
            return httpx.Response(200, json=_ok(await self._poll_async(generation, params)))
        status, body = self._answer(generation, method, params)
        return httpx.Response(status, json=body)

    def _route(self, verb: str, path: str, params: dict[str, str], _body: Any) -> Reply:
        called = self._called(verb, path, params)
        if isinstance(called, Refused):
            return called.status, called.body, {}
        generation, method = called
        if method == "getUpdates":
            return 200, _ok(self._poll_blocking(generation, params)), {}
        status, body = self._answer(generation, method, params)
        return status, body, {}

    # -- the Bot API --------------------------------------------------------------------

    def _called(self, verb: str, path: str, params: dict[str, str]) -> tuple[int, str] | Refused:
        """(generation, method) of a call to answer, or the error it gets: a 404 when it is
        unexpected, the next scripted failure of its method."""
        match = _PATH.match(path)
        with self._cond:
            if verb != "POST" or match is None or match.group(2) != self.token:
                self.unexpected.append(f"{verb} {path}")
                return Refused(404, _NOT_FOUND)
            method = match.group(3)
            self.calls.append((method, params))
            if method != "getUpdates" and not hasattr(self, f"_api_{method}"):
                self.unexpected.append(method)
                return Refused(404, _NOT_FOUND)
            if self.errors.get(method):  # scripted by `fail_next`
                error = self.errors[method].pop(0)
                return Refused(error["error_code"], error)
        return int(match.group(1) or 0), method

    def _answer(self, generation: int, method: str, params: dict[str, str]) -> tuple[int, Any]:
        with self._cond:
            result = getattr(self, f"_api_{method}")(generation, params)
        return result if isinstance(result, tuple) else (200, _ok(result))

    def _confirm(self, generation: int, offset: int | None) -> None:
        """Under the condition: count the poll, forget what the offset confirms."""
        self.offsets.append(offset)
        self.polls[generation] = self.polls.get(generation, 0) + 1
        if offset is not None:  # Telegram forgets what the offset confirms
            self.confirmed.update(u["update_id"] for u in self.pending if u["update_id"] < offset)
            self.pending = [u for u in self.pending if u["update_id"] >= offset]

    def _batch(self, params: dict[str, str], most: int = 100) -> list[dict[str, Any]]:
        return self.pending[: min(int(params.get("limit", 100)), most)]

    async def _poll_async(self, generation: int, params: dict[str, str]) -> Any:
        offset = int(params["offset"]) if "offset" in params else None
        if self.on_get_updates is not None:
            await self.on_get_updates(offset)
        with self._cond:
            self._confirm(generation, offset)
            empty = not self.pending
        if empty:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), float(params.get("timeout", 0)))
        with self._cond:
            return self._batch(params)

    def _poll_blocking(self, generation: int, params: dict[str, str]) -> Any:
        offset = int(params["offset"]) if "offset" in params else None
        deadline = time.monotonic() + min(float(params.get("timeout", 0)), LOOPBACK_POLL_S)
        with self._cond:
            self._confirm(generation, offset)
            while not self.pending and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return self._batch(params, LOOPBACK_BATCH)

    def _api_getMe(self, _generation: int, _params: dict[str, str]) -> Any:
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Ventana",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    def _api_sendMessage(self, generation: int, params: dict[str, str]) -> Any:
        chat_id, text = int(params["chat_id"]), params["text"]
        self._send_calls += 1
        status = self.fail_send.get(self._send_calls)
        if status is not None:
            return status, _error(status)
        self.sent.append(Sent(chat_id, text, params, generation))
        self.next_message_id += 1
        chat = {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}
        return {
            "message_id": self.next_message_id,
            "date": int(time.time()),
            "chat": chat,
            "text": text,
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Ventana"},
        }

    def _api_sendMessageDraft(self, generation: int, params: dict[str, str]) -> Any:
        """A streamed preview; only the final message counts as sent."""
        self.drafts.append(
            Sent(int(params["chat_id"]), params.get("text", ""), params, generation)
        )
        return True

    def _api_sendChatAction(self, _generation: int, params: dict[str, str]) -> Any:
        int(params["chat_id"])
        return True

    def _api_setMyCommands(self, _generation: int, _params: dict[str, str]) -> Any:
        return True

    def _api_deleteWebhook(self, _generation: int, _params: dict[str, str]) -> Any:
        return True

    def _api_setWebhook(self, _generation: int, _params: dict[str, str]) -> Any:
        return True

    def _api_getChatMember(self, _generation: int, params: dict[str, str]) -> Any:
        """A member's status in a chat: `admins` names the creator and administrators."""
        user_id = int(params["user_id"])
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        status = self.admins.get(user_id, "member")
        member: dict[str, Any] = {"user": user, "status": status}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(dict.fromkeys(_RIGHTS, False))
        return member


def _ok(result: Any) -> dict[str, Any]:
    return {"ok": True, "result": result}


def _error(status: int) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": "fake failure"}
    if status == 429:
        body["parameters"] = {"retry_after": 1}
    return body
