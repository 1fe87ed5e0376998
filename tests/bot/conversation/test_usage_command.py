"""`/usage` in chat: operators see this chat's provider usage and cost; others are refused."""

from __future__ import annotations

from providers.base import Usage
from tests.bot.conversation.conftest import MakeApp, inbound
from tests.support.fakes import ScriptedChatModel


async def test_operator_sees_usage_of_this_chat(make_app: MakeApp) -> None:
    """After two turns, /usage lists the model with the tokens the provider reported."""
    model = ScriptedChatModel(name="anthropic:claude-sonnet-4-6", usage=Usage(1000, 500, 800))
    app = await make_app(model, operators=("telegram:1",), language="en")
    for text in ("hola", "¿y ahora?"):
        await app.handler.handle(inbound("telegram:1", text, user="telegram:1"))
    await app.handler.handle(inbound("telegram:2", "otra", user="telegram:2"))
    [text] = await app.handler.handle(inbound("telegram:1", "/usage", user="telegram:1"))
    assert "anthropic:claude-sonnet-4-6 (chat): 2 ×" in text
    assert "in 2,000 (cached 1,600) · out 1,000" in text
    assert "$0.01668" in text  # this chat only: two calls at $0.00834
    [everything] = await app.handler.handle(inbound("telegram:1", "/usage all", user="telegram:1"))
    assert "3 ×" in everything


async def test_usage_is_operator_only(make_app: MakeApp) -> None:
    """A user who is not an operator gets the refusal, not the figures."""
    app = await make_app(operators=("telegram:1",), language="en")
    [text] = await app.handler.handle(inbound("telegram:7", "/usage", user="telegram:7"))
    assert text == "Sorry, that command is not available."


async def test_an_unknown_usage_argument_gets_the_command_s_usage(make_app: MakeApp) -> None:
    """`/usage foo` says how the command is used instead of showing this chat's figures."""
    app = await make_app(operators=("telegram:1",), language="en")
    [text] = await app.handler.handle(inbound("telegram:1", "/usage foo", user="telegram:1"))
    assert text == "Usage: /usage (this chat) or /usage all (every chat)"
