"""`probe`: one tiny request that reports success and latency instead of raising."""

from __future__ import annotations

from collections.abc import Iterator

from providers.base import ChatReply, ChatRequest, Overloaded
from providers.offline import OfflineChatModel
from providers.probe import probe
from tests.support.provider_api import ANTHROPIC, MakeAPI, RecordingSleep, answer


def ticking(*times: float) -> Iterator[float]:
    return iter(times)


class FailingModel:
    """A model whose every call raises the given exception."""

    name = "failing"

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def complete(self, request: ChatRequest) -> ChatReply:
        raise self.error


async def test_probe_sends_one_small_request(fake_api: MakeAPI, sleep: RecordingSleep) -> None:
    """The request is tiny (16 tokens) and the result reports success and the answer."""
    api = fake_api("POST", ANTHROPIC.path, answer(200, "anthropic_max_tokens"))
    clock = ticking(10.0, 10.75)
    result = await probe(ANTHROPIC.build(api.client, sleep), clock=lambda: next(clock))
    assert result.ok
    assert result.latency_s == 0.75
    assert "claude-haiku-4-5" in result.detail
    assert api.body()["max_tokens"] == 16
    assert len(api.requests) == 1


async def test_probe_reports_provider_errors() -> None:
    """A provider failure is a failed probe with the error kind, not an exception."""
    result = await probe(FailingModel(Overloaded("anthropic 529 overloaded_error: Overloaded")))
    assert not result.ok
    assert result.detail.startswith("overloaded: anthropic 529")


async def test_probe_reports_unexpected_errors() -> None:
    """Even a bug in an adapter becomes a failed probe the doctor can print."""
    result = await probe(FailingModel(RuntimeError("boom")))
    assert not result.ok
    assert result.detail == "unexpected RuntimeError: boom"


async def test_probe_of_offline_model_succeeds() -> None:
    """The offline model always answers."""
    result = await probe(OfflineChatModel())
    assert result.ok
    assert result.latency_s >= 0
