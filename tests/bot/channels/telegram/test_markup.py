"""Model Markdown rendered for Telegram as entities; what cannot be rendered goes out plain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.channels.split import utf16_len
from bot.channels.telegram.markup import telegram_chunks
from tests.support.fakes import ScriptedChatModel
from tests.support.telegram import telegram_bot

STEPS = (
    "## Pasos\n\n**Paso 1.** Mezcla _harina_ y `agua`.\n\n- uno\n- dos\n\n[docs](https://ex.com/a)"
)


def test_telegram_markdown_becomes_text_and_entities() -> None:
    """Headers, bold, italics, code and links become entities over clean text."""
    [chunk] = telegram_chunks(STEPS)
    assert chunk.text == "Pasos\n\nPaso 1. Mezcla harina y agua.\n\n• uno\n• dos\n\ndocs"
    kinds = {(e.type, chunk.text[e.offset : e.offset + e.length]) for e in chunk.entities}
    assert {("bold", "Pasos"), ("bold", "Paso 1."), ("italic", "harina")} <= kinds
    assert ("code", "agua") in kinds
    [link] = [e for e in chunk.entities if e.type == "text_link"]
    assert link.url == "https://ex.com/a"


def test_telegram_entities_survive_splitting() -> None:
    """A long formatted reply splits under 4,096 units, each chunk's entities inside it."""
    long = "\n\n".join(f"**Paso {n}.** mezcla {'harina ' * 60}😀" for n in range(40))
    chunks = telegram_chunks(long)
    assert len(chunks) > 1
    for chunk in chunks:
        assert utf16_len(chunk.text) <= 4096
        for e in chunk.entities:
            assert e.offset + e.length <= utf16_len(chunk.text)
    bolds = sum(1 for c in chunks for e in c.entities if e.type == "bold")
    assert bolds == 40


@pytest.mark.parametrize(
    "text",
    ["<memory of earlier turns>\nhola\n</memory>", "line one\nline two", "plain text"],
)
def test_telegram_unrenderable_or_plain_text_is_sent_as_written(text: str) -> None:
    """Raw HTML the converter would drop, or text without markup, goes out unchanged."""
    [chunk] = telegram_chunks(text)
    assert chunk.text == text
    assert chunk.entities == ()


async def test_telegram_refused_entities_are_resent_plain(tmp_path: Path) -> None:
    """A 400 "can't parse entities" is answered by sending the same text without them."""
    model = ScriptedChatModel(replies={"hola": "**Hola**, ¿qué tal?"}, name="echo")
    async with telegram_bot(tmp_path / "v.db", model=model) as h:
        h.fake.fail_next("sendMessage", 400, "Bad Request: can't parse entities: bad offset")
        h.fake.push(h.fake.text(5, "hola"))
        assert await h.wait_replies(5, 1) == ["Hola, ¿qué tal?"]
        first, second = h.fake.params_of("sendMessage")
        assert json.loads(first["entities"])[0]["type"] == "bold"
        assert "entities" not in second
        assert all("parse_mode" not in p for p in (first, second))
