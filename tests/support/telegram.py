"""A fake Bot API behind httpx.MockTransport, an echo model, and a harness that wires
python-telegram-bot, the real handler and a tmp SQLite database together."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
from telegram.request import HTTPXRequest

from bot.app import App
from bot.channels.telegram.channel import TelegramChannel
from config.settings import load_settings
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel, echo

TOKEN = "123456:TEST-token"
BASE_URL = "https://bot-api.test/bot"
BOT_ID = 999
BOT_USERNAME = "ventana_bot"
KNOWN = {
    "getMe",
    "getUpdates",
    "sendMessage",
    "sendMessageDraft",
    "sendChatAction",
    "setMyCommands",
    "deleteWebhook",
    "setWebhook",
    "getChatMember",
}


@dataclass
class Sent:
    chat_id: int
    text: str
    params: dict[str, str]


@dataclass
class FakeBotAPI:
    """Serves scripted updates and records every call; any other method is a failure."""

    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    drafts: list[Sent] = field(default_factory=list)
    offsets: list[int | None] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    errors: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    on_get_updates: Callable[[int | None], Awaitable[None]] | None = None
    next_update_id: int = 1000
    admins: dict[int, str] = field(default_factory=dict)  # user id → "creator"/"administrator"
    next_message_id: int = 1
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    # -- scripting ----------------------------------------------------------------------

    def push(self, *updates: dict[str, Any]) -> None:
        self.pending.extend(updates)
        self._wake.set()

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

    # -- the API ------------------------------------------------------------------------

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        method = request.url.path.rsplit("/", 1)[-1]
        params = {k: v[0] for k, v in parse_qs(request.content.decode(), True).items()}
        self.calls.append((method, params))
        if method not in KNOWN:
            self.unexpected.append(method)
            return httpx.Response(
                404, json={"ok": False, "error_code": 404, "description": "Not Found"}
            )
        if self.errors.get(method):
            error = self.errors[method].pop(0)
            return httpx.Response(error["error_code"], json=error)
        result = await getattr(self, f"_{method}")(params)
        return httpx.Response(200, json={"ok": True, "result": result})

    async def _getMe(self, _: dict[str, str]) -> dict[str, Any]:
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Ventana",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _getUpdates(self, params: dict[str, str]) -> list[dict[str, Any]]:
        offset = int(params["offset"]) if "offset" in params else None
        self.offsets.append(offset)
        if self.on_get_updates is not None:
            await self.on_get_updates(offset)
        if offset is not None:  # Telegram forgets what the offset confirms
            self.pending = [u for u in self.pending if u["update_id"] >= offset]
        if not self.pending:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), float(params.get("timeout", 0)))
        limit = int(params.get("limit", 100))
        return self.pending[:limit]

    async def _sendMessage(self, params: dict[str, str]) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        self.sent.append(Sent(chat_id, params["text"], params))
        self.next_message_id += 1
        chat = {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}
        return {
            "message_id": self.next_message_id,
            "date": int(time.time()),
            "chat": chat,
            "text": params["text"],
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Ventana"},
        }

    async def _sendMessageDraft(self, params: dict[str, str]) -> bool:
        self.drafts.append(Sent(int(params["chat_id"]), params.get("text", ""), params))
        return True

    async def _sendChatAction(self, _: dict[str, str]) -> bool:
        return True

    async def _setMyCommands(self, _: dict[str, str]) -> bool:
        return True

    async def _deleteWebhook(self, _: dict[str, str]) -> bool:
        return True

    async def _setWebhook(self, _: dict[str, str]) -> bool:
        return True

    async def _getChatMember(self, params: dict[str, str]) -> dict[str, Any]:
        """A member's status in a chat: `admins` names the creator and administrators."""
        user_id = int(params["user_id"])
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        status = self.admins.get(user_id, "member")
        member: dict[str, Any] = {"user": user, "status": status}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            rights = ("can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages",
                      "can_manage_video_chats", "can_restrict_members", "can_promote_members",
                      "can_change_info", "can_invite_users", "can_post_stories",
                      "can_edit_stories", "can_delete_stories")  # fmt: skip
            member.update(dict.fromkeys(rights, False))
        return member


@dataclass
class Harness:
    app: App
    channel: TelegramChannel
    fake: FakeBotAPI
    model: ScriptedChatModel

    async def wait_for(self, done: Callable[[], bool], within: float = 10.0) -> None:
        """Poll `done` until true; fail the test after `within` seconds."""
        async with asyncio.timeout(within):
            while not done():  # noqa: ASYNC110 - conditions span the fake, the DB, the model
                await asyncio.sleep(0.005)

    async def wait_replies(self, chat_id: int, count: int, within: float = 10.0) -> list[str]:
        await self.wait_for(lambda: len(self.fake.texts_to(chat_id)) >= count, within)
        return self.fake.texts_to(chat_id)

    async def exchanges(self, key: str) -> list[dict[str, Any]]:
        rows = (await self.app.store.export(key))["exchanges"]
        assert isinstance(rows, list)
        return rows


def settings_for(db: Path, **overrides: Any) -> Any:
    values: dict[str, Any] = {
        "db": db,
        "telegram_bot_token": TOKEN,
        "telegram_base_url": BASE_URL,
        "language": "en",
        "topic_detection": "off",
        "operators": ("telegram:1",),
        "chat_model": "offline",
        "summary_model": "offline",
    }
    values.update(overrides)
    return load_settings(**values)


def requests_for(fake: FakeBotAPI) -> tuple[HTTPXRequest, HTTPXRequest]:
    def make() -> HTTPXRequest:
        return HTTPXRequest(httpx_kwargs={"transport": fake.transport()})

    return make(), make()


@contextlib.asynccontextmanager
async def telegram_bot(
    db: Path,
    *,
    fake: FakeBotAPI | None = None,
    model: ScriptedChatModel | None = None,
    start: bool = True,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """A started channel on the fake API; on exit: stop, close, no unexpected calls."""
    fake = fake or FakeBotAPI()
    model = model or ScriptedChatModel(reply=echo, name="echo")
    app = await App.build(
        settings_for(db, **overrides), chat_model=model, summary_model=OfflineChatModel()
    )
    request, updates_request = requests_for(fake)
    channel = TelegramChannel(
        app,
        request=request,
        get_updates_request=updates_request,
        poll_timeout=1,
        retry_delay=0.01,
        drain_timeout=5,
    )
    harness = Harness(app, channel, fake, model)
    try:
        if start:
            await channel.start()
        yield harness
    finally:
        if channel.me is not None:
            await channel.stop()
        await app.aclose()
    assert fake.unexpected == [], f"unexpected Bot API methods: {fake.unexpected}"


def text_json(update: dict[str, Any]) -> bytes:
    return json.dumps(update).encode()
