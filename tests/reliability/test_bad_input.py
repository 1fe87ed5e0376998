"""Hostile text through the real handler: nothing escapes, nothing corrupt is stored, and
the user always gets a clear answer (the model's, or the too-long / empty message).
Malformed channel input (wrong JSON types, junk, 100,000-deep nesting) through the real
webhook routes: always acknowledged, recorded, never left pending; each probe prints
'N tried, N failed'."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from bot.app import App
from bot.channels.http import build_http_app
from bot.conversation.texts import t
from config.settings import load_settings
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.inbound import inbound as make_inbound
from tests.support.telegram import telegram_bot
from tests.support.whatsapp import FakeGraph, golden
from tests.support.whatsapp_rig import WhatsAppRig

KEY = "telegram:77"
MAX_CHARS = 16_000
EMOJI = ["😀", "👍🏽", "🇪🇸", "👨‍👩‍👧", "❤️", "🤷‍♀️", "\U0001fae0"]
SURROGATES = ["\ud800", "\udfff", "\udc00", "\ud83d", "\ud83d\ude00"]  # the last one a pair

control = st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp"]), min_size=1, max_size=20)
surrogate = st.lists(st.sampled_from(SURROGATES), min_size=1, max_size=4).map("".join)
emoji = st.lists(st.sampled_from(EMOJI), min_size=1, max_size=30).map("".join)
whitespace = st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000\u2028"), max_size=30)
markdown = st.text(st.sampled_from("*_`[]()~>#+-=|{}.!\\<&"), min_size=1, max_size=60)
anything = st.text(st.characters(codec=None), max_size=60)
huge = st.builds(
    lambda n, piece: (piece * n)[:n],
    st.integers(min_value=MAX_CHARS + 1, max_value=110_000),
    st.sampled_from(["a", "ñ ", "😀", "\x00", "*_", "\ud800x"]),
)
part = st.one_of(control, surrogate, emoji, whitespace, markdown, anything)
message = st.one_of(st.lists(part, min_size=1, max_size=6).map("".join), huge, whitespace)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(message, min_size=1, max_size=5))
@example(["\ud800"])
@example(["a" * 100_000, "ok"])
@example([" \t\n\u00a0 ", "😀👍🏽🇪🇸"])
@example(["**bold** _x_ `code` [link](http://e.x) ~~s~~ > q", "\x00\x07\x1b[31mred\x1b[0m"])
@example(["\ud83d\ude00 split pair and lone \udc00", "/help\ud800"])
def test_hostile_text_gets_a_clear_answer_and_stores_cleanly(texts: list[str]) -> None:
    """Control characters, lone surrogates, 100 KB, emoji, whitespace, markdown: handled."""
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_converse(Path(tmp), texts))


async def _converse(tmp: Path, texts: list[str]) -> None:
    settings = load_settings(
        db=tmp / "v.db", chat_model="offline", summary_model="offline", language="es",
        topic_detection="heuristic", window_exchanges=2, fold_batch=2,
        max_message_chars=MAX_CHARS,
    )  # fmt: skip
    model = ScriptedChatModel(default="respuesta")
    app = await App.build(settings, chat_model=model)
    try:
        for n, text in enumerate(texts):
            calls = len(model.requests)
            inbound = make_inbound(KEY, text, f"u{n}")
            replies = await asyncio.wait_for(app.handler.handle(inbound), 10)
            _check_reply(text, replies, model, calls)
            await _check_stored(app, text, model, calls)
        await app.folds.drain()
    finally:
        await app.aclose()
    with closing(sqlite3.connect(tmp / "v.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM inbox WHERE status != 'done'").fetchone()[0] == 0


def clean(text: str) -> str:
    """What the product is expected to keep: valid surrogate pairs joined, lone ones U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _check_reply(text: str, replies: list[str], model: ScriptedChatModel, calls: int) -> None:
    body = clean(text).strip()
    called = len(model.requests) > calls
    if not body:
        assert replies == [t("es", "empty")]
    elif body.startswith("/"):
        assert replies  # some command's own answer
        assert all(r.strip() for r in replies)
    elif len(body) > MAX_CHARS:
        assert replies == [t("es", "too_long", chars=len(body), limit=MAX_CHARS)]
        assert not called
    elif called:
        sent = model.requests[-1].messages[-1].content
        assert body in sent  # what the model saw is the (clean) message, whole
        shown = [r for r in replies if r != t("es", "auto_reset")]
        assert shown == [f"respuesta {len(model.requests)}"]
    else:
        assert replies[-1] == t("es", "too_large")
    for reply in replies:
        reply.encode("utf-8")  # deliverable: no lone surrogate reaches a channel


async def _check_stored(app: App, text: str, model: ScriptedChatModel, calls: int) -> None:
    exported = await app.store.export(KEY)
    inbox = exported["inbox"]
    assert isinstance(inbox, list)
    assert inbox[-1]["text"] == clean(text)  # stored whole, round-trips
    if len(model.requests) > calls:
        exchanges = await app.store.all_exchanges(KEY)
        assert exchanges[-1].user_text == clean(text).strip()


# -- malformed channel input: every update acknowledged, none left pending -----------------

Probe = Callable[[bytes], Awaitable[int]]
Rig = Callable[[Path], AbstractAsyncContextManager[tuple[App, Probe]]]
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
MISSING = object()
replacement = st.one_of(json_value, st.just(MISSING))
nesting = st.integers(min_value=1, max_value=100_000)
junk = st.one_of(
    st.binary(max_size=64),
    json_value.map(lambda v: json.dumps(v).encode()),
    nesting.map(lambda n: b"[" * n + b"]" * n),
    nesting.map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
)
TG_BASE: dict[str, Any] = {"update_id": 1, "message": {
    "message_id": 1, "date": 1_718_900_000, "text": "hola",
    "chat": {"id": 5, "type": "private", "first_name": "A"},
    "from": {"id": 5, "is_bot": False, "first_name": "A"}}}  # fmt: skip
TG_PATHS: list[tuple[Any, ...]] = [
    ("update_id",), ("message",), ("message", "text"), ("message", "chat"),
    ("message", "chat", "id"), ("message", "chat", "type"), ("message", "from"),
    ("message", "from", "id"), ("message", "date"), ("message", "entities"),
    ("message", "reply_to_message"), ("message", "message_id"),
]  # fmt: skip
WA_MESSAGE = ("entry", 0, "changes", 0, "value", "messages", 0)
WA_PATHS: list[tuple[Any, ...]] = [
    ("entry",), ("entry", 0, "changes"), WA_MESSAGE[:5], WA_MESSAGE[:6], WA_MESSAGE,
    *((*WA_MESSAGE, name) for name in ("from", "id", "type", "text", "timestamp")),
    (*WA_MESSAGE, "text", "body"),
]  # fmt: skip


@dataclass
class Tally:
    """How a probe went: examples tried, examples failed (a 500, an error, a stuck row)."""

    name: str
    tried: int = 0
    failed: list[str] = field(default_factory=list)

    def report(self) -> str:
        return f"{self.name}: {self.tried} tried, {len(self.failed)} failed"


def mutate(base: dict[str, Any], path: tuple[Any, ...], value: object) -> dict[str, Any]:
    """`base` with the field at `path` replaced by `value` (or removed, for MISSING)."""
    data = copy.deepcopy(base)
    node: Any = data
    for step in path[:-1]:
        node = node[step]
    if value is MISSING and isinstance(node, dict):
        node.pop(path[-1], None)
    elif value is MISSING:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


def mutations(
    base: Any, id_path: tuple[Any, ...], ids: Iterator[object], paths: Sequence[tuple[Any, ...]]
) -> st.SearchStrategy[bytes]:
    """`base` with a fresh id at `id_path` and one field at `paths` replaced; junk besides."""

    def body(path: tuple[Any, ...], value: object) -> bytes:
        fresh = mutate(base, id_path, next(ids))
        return json.dumps(mutate(fresh, path, value)).encode()

    bodies = st.builds(body, st.sampled_from(paths), replacement)
    return st.one_of(bodies, bodies, junk)


def check_probe(
    tally: Tally,
    rig: Rig,
    tmp: Path,
    bodies: st.SearchStrategy[bytes],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run the probe, show its tally, and fail with the first bodies it did not handle."""
    run_probe(tally, rig, tmp, bodies)
    with capsys.disabled():
        print(f"\n{tally.report()}")
    assert tally.failed == [], tally.failed[:3]


def run_probe(tally: Tally, rig: Rig, tmp: Path, bodies: st.SearchStrategy[bytes]) -> None:
    """Feed every generated body to the rig's probe in one event loop; tally the failures."""
    loop = asyncio.new_event_loop()
    opened = rig(tmp)
    app, probe = loop.run_until_complete(opened.__aenter__())

    @settings(
        max_examples=120,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(bodies)
    def feed(body: bytes) -> None:
        tally.tried += 1
        try:
            with capture_logs() as logs:
                status = loop.run_until_complete(_probe_once(app, probe, body))
        except Exception as exc:
            tally.failed.append(f"raised {exc!r} for {body[:80]!r}")
            return
        errors = [e["event"] for e in logs if e["log_level"] in ("error", "critical")]
        if status != 200 or errors:
            tally.failed.append(f"{status} {errors} for {body[:300]!r}")

    try:
        feed()
    finally:
        loop.run_until_complete(opened.__aexit__(None, None, None))
        loop.close()


async def _probe_once(app: App, probe: Probe, body: bytes) -> int:
    status = await asyncio.wait_for(probe(body), 10)
    await asyncio.wait_for(app.handler.drain(), 10)
    if await app.store.inbox_unfinished():
        return -1  # a row left pending would be re-queued at every start
    return status


@contextlib.asynccontextmanager
async def telegram_rig(tmp: Path) -> AsyncIterator[tuple[App, Probe]]:
    """A started webhook-mode Telegram channel behind the real HTTP app, on a fake Bot API."""
    secret = "probe-secret"
    hooks = {"telegram_webhook_url": "https://bot.test/hook", "telegram_webhook_secret": secret}
    async with telegram_bot(tmp / "tg.db", **hooks) as h:
        http = build_http_app(h.app.store.ping, telegram=h.channel)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=http), base_url="http://ventana"
        ) as client:

            async def probe(body: bytes) -> int:
                headers = {"X-Telegram-Bot-Api-Secret-Token": secret}
                response = await client.post("/telegram/webhook", content=body, headers=headers)
                return response.status_code

            yield h.app, probe


@contextlib.asynccontextmanager
async def whatsapp_rig(tmp: Path) -> AsyncIterator[tuple[App, Probe]]:
    """The WhatsApp channel behind the real HTTP app; every body validly signed."""
    graph = FakeGraph()
    rig = await WhatsAppRig.open(tmp / "wa.db", graph, ScriptedChatModel(reply=respuesta))
    try:

        async def probe(body: bytes) -> int:
            return (await rig.post(body)).status_code

        yield rig.app, probe
    finally:
        await rig.aclose()
        await graph.client.aclose()
    assert graph.unexpected == []


def test_malformed_telegram_updates_are_acknowledged_and_never_left_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Webhook updates with any field of any JSON type, or junk: always 200, none pending."""
    updates = mutations(TG_BASE, ("update_id",), itertools.count(2), TG_PATHS)
    check_probe(Tally("telegram webhook updates"), telegram_rig, tmp_path, updates, capsys)


def test_malformed_whatsapp_bodies_are_acknowledged_and_never_left_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Signed bodies with any field of any JSON type, 100,000-deep nesting: 200, none pending."""
    wamids = (f"wamid.{i}" for i in itertools.count())
    base = json.loads(golden("text.json"))
    bodies = mutations(base, (*WA_MESSAGE, "id"), wamids, WA_PATHS)
    check_probe(Tally("whatsapp webhook bodies"), whatsapp_rig, tmp_path, bodies, capsys)
