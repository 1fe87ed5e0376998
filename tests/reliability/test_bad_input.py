"""Hostile text through the real handler: nothing escapes, nothing corrupt is stored, and
the user always gets a clear answer (the model's, or the too-long / empty message)."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.app import App
from bot.conversation.inbound import Inbound
from bot.conversation.texts import t
from config.settings import load_settings
from tests.support.fakes import ScriptedChatModel

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
            inbound = Inbound(KEY, text, f"u{n}", datetime.now(UTC), KEY)
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
