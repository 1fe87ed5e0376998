"""A model reply past `VENTANA_REPLY_MAX_CHARS`, through the real adapters in a real App:
stored as truncated noise, answered with one short apology, not thousands of messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import build_models
from bot.conversation.texts import t
from config.specs import parse_spec
from providers.alerts import ReportingChatModel
from providers.factory import build_chat_model
from providers.sdk import RetryingChatModel
from tests.support.processes.provider_rig import (
    CREDS,
    Chat,
    answer,
    app_with,
    fake_provider,
    settings_for,
)
from tests.support.provider_api import FLAVORS, Flavor

CAP = 1_000


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("words", [1_000, 50_000], ids=["over_the_cap", "over_the_byte_limit"])
async def test_a_reply_past_the_cap_is_noise_and_gets_the_short_apology(
    tmp_path: Path, flavor: Flavor, words: int
) -> None:
    """8 KB or 400 KB of reply with a 1,000-character cap: one apology, a truncated noise row."""
    fake = fake_provider(flavor, [answer(flavor.reply("palabra " * words))])
    spec = parse_spec(flavor.spec)
    model = build_chat_model(spec, CREDS, http_client=fake.client, reply_max_chars=CAP)
    async with app_with(settings_for(tmp_path, flavor.spec), model) as app:
        chat = Chat(app)
        replies = await chat.say("hola")
        stored = await app.store.all_exchanges(chat.key)
    assert replies == [t("es", "error_generic")]
    assert [x.noise_reason for x in stored] == ["truncated"]
    assert len(stored[0].reply_text) <= CAP


def test_the_setting_reaches_both_models(tmp_path: Path) -> None:
    """VENTANA_REPLY_MAX_CHARS is handed to the chat model and to the summary model."""
    settings = settings_for(
        tmp_path,
        "openai:gpt-test",
        "anthropic:claude-test",
        reply_max_chars=1234,
        openai_api_key="sk-t",
        anthropic_api_key="sk-a",
    )
    for model in build_models(settings):
        assert isinstance(model, ReportingChatModel)
        assert isinstance(model.inner, RetryingChatModel)
        assert model.inner.reply_max_chars == 1234
