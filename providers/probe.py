"""One tiny request to a model, for `ventana doctor --live`: does it answer, and how fast."""

from __future__ import annotations

import time
from dataclasses import dataclass

from config.redaction import redact

from .base import ChatModel, ChatRequest, Message, ProviderError
from .retry import Clock

PROBE_REQUEST = ChatRequest(
    system="You are a health check. Reply with the single word: ok",
    messages=(Message("user", "ping"),),
    # Small, but not so small that a model which thinks first returns nothing at all.
    max_tokens=16,
    purpose="probe",
    language="en",
)
_SHOWN_CHARS = 40


@dataclass(frozen=True, slots=True)
class ProbeResult:
    ok: bool
    latency_s: float
    detail: str


async def probe(model: ChatModel, *, clock: Clock = time.monotonic) -> ProbeResult:
    """Send `PROBE_REQUEST`; any answer, even a cut-off one, proves the model is reachable."""
    start = clock()
    try:
        reply = await model.complete(PROBE_REQUEST)
    except ProviderError as exc:
        return ProbeResult(False, clock() - start, f"{exc.kind}: {redact(str(exc))}")
    except Exception as exc:  # a doctor reports every failure instead of crashing on one
        detail = f"unexpected {type(exc).__name__}: {redact(str(exc))}"
        return ProbeResult(False, clock() - start, detail)
    elapsed = clock() - start
    answer = " ".join(reply.text.split())[:_SHOWN_CHARS]
    detail = (
        f"{reply.model or model.name} answered {answer!r} ({reply.usage.output_tokens} tokens)"
    )
    return ProbeResult(True, elapsed, detail)
