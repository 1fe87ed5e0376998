"""Model Markdown rendered as WhatsApp markup, end to end through the channel."""

from __future__ import annotations

from pathlib import Path

from bot.channels.whatsapp.markup import to_whatsapp
from tests.support.fakes import ScriptedChatModel
from tests.support.whatsapp import LUCIA, FakeGraph, golden
from tests.support.whatsapp_rig import WhatsAppRig

STEPS = (
    "## Pasos\n\n**Paso 1.** Mezcla _harina_ y `agua`.\n\n- uno\n- dos\n\n[docs](https://ex.com/a)"
)


def test_whatsapp_markup() -> None:
    """WhatsApp gets *bold*, _italic_, ~strike~, ```mono```, bold headers, links as text (url)."""
    text = to_whatsapp(STEPS + "\n\n~~viejo~~\n\n```\nprint(1)\n```")
    assert text == (
        "*Pasos*\n\n*Paso 1.* Mezcla _harina_ y ```agua```.\n\n• uno\n• dos\n\n"
        "docs (https://ex.com/a)\n\n~viejo~\n\n```\nprint(1)\n```"
    )


def test_whatsapp_plain_lines_stay_as_written() -> None:
    """Text without markup (the bot's own messages) keeps its lines."""
    assert to_whatsapp("línea uno\nlínea dos") == "línea uno\nlínea dos"


async def test_whatsapp_reply_goes_out_in_whatsapp_markup(tmp_path: Path) -> None:
    """A model's Markdown reaches the Graph API as WhatsApp markup, not raw Markdown."""
    graph = FakeGraph()
    model = ScriptedChatModel(reply=lambda _request: "## Pedido\n\n**#4821** sale _hoy_.")
    rig = await WhatsAppRig.open(tmp_path / "wa.db", graph, model)
    try:
        assert (await rig.post(golden("text.json"))).status_code == 200
        await rig.settle()
        assert graph.texts_to(LUCIA) == ["*Pedido*\n\n*#4821* sale _hoy_."]
    finally:
        await rig.aclose()
        await graph.client.aclose()
    assert graph.unexpected == []
