"""Provider faults through the real SDK adapters inside a real App and handler.

Every user message gets an answer or a short apology within the reply deadline, noise
is stored with its reason, nothing crashes or hangs, and while folds fail the pending
exchanges still reach the chat model verbatim.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from bot.conversation.texts import t
from providers.base import ChatModel
from tests.support.processes.provider_rig import (
    DEADLINE_S,
    Chat,
    Step,
    adapter,
    answer,
    app_with,
    fake_provider,
    hang,
    read_timeout,
    settings_for,
)
from tests.support.provider_api import ANTHROPIC, FLAVORS, FakeAPI, Flavor, RecordingSleep


def rate_limited(flavor: Flavor, seconds: str = "2") -> Step:
    kind = "rate_limit_error" if flavor is ANTHROPIC else "requests"
    return answer(flavor.error(429, kind, "rate_limit_exceeded"), {"retry-after": seconds})


def quota(flavor: Flavor) -> Step:
    if flavor is ANTHROPIC:
        return answer(flavor.error(400, "billing_error"))
    return answer(flavor.error(429, "insufficient_quota", "insufficient_quota"))


def broken_json(flavor: Flavor) -> Step:
    return answer(
        httpx2.Response(200, content=b'{"id": "x', headers={"content-type": "application/json"})
    )


def wrong_shape(flavor: Flavor) -> Step:
    return answer(httpx2.Response(200, json={"unexpected": True, "content": "x", "choices": 3}))


@dataclass
class ChatRig:
    fake: FakeAPI
    sleep: RecordingSleep
    model: ChatModel


def chat_rig(flavor: Flavor, *script: Step, forever: Step | None = None) -> ChatRig:
    """The real adapter for `flavor` over a scripted transport, with instant retry waits."""
    fake, sleep = fake_provider(flavor, script, forever), RecordingSleep()
    return ChatRig(fake, sleep, adapter(flavor.spec, fake, sleep, DEADLINE_S))


async def one_turn(
    tmp_path: Path, flavor: Flavor, rig: ChatRig, text: str = "hola"
) -> tuple[list[str], list[str | None], Chat]:
    """One message through a real App over `rig`: its replies, the stored noise reasons."""
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        replies = await chat.say(text)
        reasons = await chat.noise_reasons()
    return replies, reasons, chat


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_rate_limit_with_retry_after_is_waited_out(tmp_path: Path, flavor: Flavor) -> None:
    """A 429 asking for 0.5 s is retried after 0.5 s and the user gets the real answer."""
    rig = chat_rig(flavor, rate_limited(flavor, "0.5"))
    replies, reasons, _chat = await one_turn(tmp_path, flavor, rig, "¿Dónde está mi pedido #4821?")
    assert replies == ["Respuesta a «¿Dónde está mi pedido #4821?»"]
    assert rig.sleep.delays == [0.5]
    assert reasons == [None]
    assert not rig.fake.unexpected


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_retry_after_beyond_the_deadline_apologizes_at_once(
    tmp_path: Path, flavor: Flavor
) -> None:
    """A 429 asking for 30 s cannot be waited out in a chat: the apology comes at once."""
    rig = chat_rig(flavor, rate_limited(flavor, "30"))
    replies, reasons, chat = await one_turn(tmp_path, flavor, rig)
    assert replies == [t("es", "error_rate_limited")]
    assert reasons == ["provider_error:rate_limited"]
    assert (len(rig.fake.bodies), rig.sleep.delays) == (1, [])
    assert chat.durations[0] < 1.0


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_rate_limit_that_persists_ends_in_an_apology(tmp_path: Path, flavor: Flavor) -> None:
    """Three 429s in a row: two retries, then the rate-limit apology, stored as noise."""
    script = [rate_limited(flavor, "0.2") for _ in range(3)]
    rig = chat_rig(flavor, *script)
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        first = await chat.say("hola")
        second = await chat.say("¿sigues ahí?")
        reasons = await chat.noise_reasons()
    assert first == [t("es", "error_rate_limited")]
    assert second == ["Respuesta a «¿sigues ahí?»"]
    assert reasons == ["provider_error:rate_limited", None]
    assert (len(rig.fake.bodies), rig.sleep.delays) == (4, [0.2, 0.2])


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_quota_exhausted_is_not_retried(tmp_path: Path, flavor: Flavor) -> None:
    """Quota errors cannot heal by waiting: one call, the quota apology, noise recorded."""
    rig = chat_rig(flavor, quota(flavor))
    replies, reasons, _chat = await one_turn(tmp_path, flavor, rig)
    assert replies == [t("es", "error_quota_exhausted")]
    assert reasons == ["provider_error:quota_exhausted"]
    assert (len(rig.fake.bodies), rig.sleep.delays) == (1, [])


async def test_anthropic_529_overloaded_retries_then_apologizes(tmp_path: Path) -> None:
    """529 overloaded: retried after a backoff while the deadline allows, then the apology."""
    overloaded = answer(ANTHROPIC.error(529, "overloaded_error"))
    again = answer(ANTHROPIC.error(529, "overloaded_error"))
    rig = chat_rig(ANTHROPIC, overloaded, again, forever=again)
    replies, reasons, _chat = await one_turn(tmp_path, ANTHROPIC, rig)
    assert replies == [t("es", "error_overloaded")]
    assert reasons == ["provider_error:overloaded"]
    assert rig.sleep.delays == [0.5]  # a second backoff (1 s) would leave < 2 s of a 3 s deadline


async def test_anthropic_529_once_then_answers(tmp_path: Path) -> None:
    """A single 529 costs one short backoff; the answer is signal."""
    rig = chat_rig(ANTHROPIC, answer(ANTHROPIC.error(529, "overloaded_error")))
    async with app_with(settings_for(tmp_path, ANTHROPIC.spec), rig.model) as app:
        chat = Chat(app)
        assert await chat.say("hola") == ["Respuesta a «hola»"]
        assert await chat.noise_reasons() == [None]


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_a_hanging_server_is_cut_at_the_deadline(tmp_path: Path, flavor: Flavor) -> None:
    """A server that never answers: the timeout apology within the deadline, not a hang."""
    rig = chat_rig(flavor, forever=hang)
    replies, reasons, chat = await one_turn(tmp_path, flavor, rig)
    assert replies == [t("es", "error_timeout")]
    assert reasons == ["provider_error:timeout"]
    assert chat.durations[0] > DEADLINE_S / 2  # it really waited for the server


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_a_read_timeout_is_retried(tmp_path: Path, flavor: Flavor) -> None:
    """A timed-out attempt is retried after a short backoff and the answer arrives."""
    rig = chat_rig(flavor, read_timeout)
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        assert await chat.say("hola") == ["Respuesta a «hola»"]
    assert rig.sleep.delays == [0.5]


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("broken", [broken_json, wrong_shape], ids=["bad-json", "wrong-shape"])
async def test_a_broken_response_becomes_a_generic_apology(
    tmp_path: Path, flavor: Flavor, broken: Callable[[Flavor], Step]
) -> None:
    """Unreadable bodies are retried, then the generic apology; stored as unavailable."""
    step = broken(flavor)
    rig = chat_rig(flavor, step, step, step)
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        replies = await chat.say("hola")
        reasons = await chat.noise_reasons()
        assert await chat.say("¿y ahora?") == ["Respuesta a «¿y ahora?»"]
    assert replies == [t("es", "error_generic")]
    assert reasons == ["provider_error:unavailable"]


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_an_empty_reply_is_noise_with_an_apology(tmp_path: Path, flavor: Flavor) -> None:
    """An empty text is never shown as a blank message; it is stored as `empty` noise."""
    rig = chat_rig(flavor, answer(flavor.reply("")))
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        assert await chat.say("hola") == [t("es", "error_generic")]
        assert await chat.noise_reasons() == ["empty"]
        state = await app.store.peek_state(chat.key, 2)
        assert state is not None
        assert state.window == ()  # noise never enters the window


def server_error(flavor: Flavor) -> Step:
    return answer(flavor.error(500, "api_error" if flavor is ANTHROPIC else "server_error"))


async def _fold_rig(tmp: Path, flavor: Flavor, failure: Step):  # type: ignore[no-untyped-def]
    chat_fake = fake_provider(flavor)
    summary_fake = fake_provider(flavor, forever=failure)
    sleep = RecordingSleep()
    chat_model = adapter(flavor.spec, chat_fake, sleep, DEADLINE_S)
    # As `bot.app.build_models` does: folds run off the reply path with a longer deadline.
    summary_model = adapter(flavor.spec, summary_fake, sleep, max(DEADLINE_S, 60.0))
    settings = settings_for(tmp, flavor.spec, summary=flavor.spec)
    return chat_fake, summary_fake, app_with(settings, chat_model, summary_model)


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_failing_folds_keep_every_exchange_in_the_request(
    tmp_path: Path, flavor: Flavor
) -> None:
    """The summary model answers 500 to every fold: replies go on, nothing is summarized,
    and every earlier message still reaches the chat model verbatim."""
    chat_fake, summary_fake, rig = await _fold_rig(tmp_path, flavor, server_error(flavor))
    messages = [f"Mensaje {n}: el pedido #{4800 + n} llega el día {n}" for n in range(1, 9)]
    async with rig as app:
        chat = Chat(app)
        for text in messages:
            assert await chat.say(text) == [f"Respuesta a «{text[:60]}»"]
            await app.folds.drain()
        state = await app.store.peek_state(chat.key, 2)
        reasons = await chat.noise_reasons()
    assert summary_fake.bodies, "folds were attempted"
    assert state is not None
    assert state.summary is None
    assert reasons == [None] * len(messages)
    last_request = chat_fake.texts_sent(-1)
    for text in messages:
        assert text in last_request


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_a_hanging_summary_model_never_delays_a_reply(
    tmp_path: Path, flavor: Flavor
) -> None:
    """A fold stuck on a silent summary server runs in the background: replies stay fast
    and the exchanges it would have folded are sent verbatim."""
    chat_fake, summary_fake, rig = await _fold_rig(tmp_path, flavor, hang)
    messages = [f"Nota {n}: la factura F-{700 + n} vence el {n} de marzo" for n in range(1, 7)]
    async with rig as app:
        chat = Chat(app)
        for text in messages:
            assert await chat.say(text) == [f"Respuesta a «{text[:60]}»"]
        for _ in range(500):  # the fold runs in the background: give it time to ask
            if summary_fake.bodies:
                break
            await asyncio.sleep(0.01)
        assert summary_fake.bodies, "a fold is waiting on the summary model"
    assert max(chat.durations) < 1.0
    for text in messages:
        assert text in chat_fake.texts_sent(-1)


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_a_reply_with_a_lone_surrogate_is_stored_and_delivered(
    tmp_path: Path, flavor: Flavor
) -> None:
    """JSON may escape a lone surrogate (`"\\ud800"`); the reply still reaches the user."""
    rig = chat_rig(flavor, answer(flavor.reply("hola \ud800 ok")))
    async with app_with(settings_for(tmp_path, flavor.spec), rig.model) as app:
        chat = Chat(app)
        replies = await chat.say("hola")
        stored = await app.store.all_exchanges(chat.key)
    assert replies == ["hola \ufffd ok"]
    assert [x.reply_text for x in stored] == ["hola \ufffd ok"]
