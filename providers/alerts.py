"""Problems an operator must see: a provider failure logged at the level it deserves.

A rejected key or an exhausted quota fails every reply until someone acts, so it is an
error in the log, with the provider and model, the error class and HTTP status, and the
provider's message redacted and cut (never a key, never the prompt it may echo). A passing failure
(timeout, overload) is info; the same model failing several calls in a row is a warning.
`ReportingChatModel` wraps an adapter and does this for both its `complete` and `stream`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import structlog

from config.redaction import redact

from .base import (
    AuthenticationFailed,
    ChatModel,
    ChatReply,
    ChatRequest,
    ProviderError,
    QuotaExhausted,
)
from .streaming import TextSink, complete_streaming

T = TypeVar("T")
REPEATED = 3  # consecutive failed calls before a warning

log = structlog.get_logger(__name__)


class FailureLog:
    """Counts one model's consecutive failures and logs each at its level."""

    def __init__(self, model: str, *, repeated: int = REPEATED) -> None:
        self.provider, _, self.model = model.partition(":")
        self.repeated = repeated
        self.in_a_row = 0

    def success(self) -> None:
        if self.in_a_row >= self.repeated:
            log.warning("provider_recovered", **self._who(), after_failures=self.in_a_row)
        self.in_a_row = 0

    def failure(self, error: ProviderError, purpose: str) -> None:
        self.in_a_row += 1
        # The class and status say what happened; the provider's own words, which may
        # hold a key or quote the prompt, only redacted and cut (see `redact`).
        facts = {
            **self._who(),
            "kind": error.kind,
            "purpose": purpose,
            "error": type(error).__name__,
            "status": error.status,
        }
        detail = redact(str(error))
        if isinstance(error, AuthenticationFailed):
            log.error("provider_auth_failed", **facts, detail=detail)
        elif isinstance(error, QuotaExhausted):
            log.error("provider_quota_exhausted", **facts, detail=detail)
        elif self.in_a_row >= self.repeated:
            log.warning("provider_failing", **facts, in_a_row=self.in_a_row, detail=detail)
        else:
            log.info("provider_failed", **facts, detail=detail)

    def _who(self) -> dict[str, str]:
        return {"provider": self.provider, "model": self.model or self.provider}


class ReportingChatModel:
    """A `ChatModel` (streaming when asked) whose failures reach the operator's log."""

    def __init__(self, inner: ChatModel, *, repeated: int = REPEATED) -> None:
        self.inner = inner
        self.name = inner.name
        self.failures = FailureLog(inner.name, repeated=repeated)

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await self._watch(self.inner.complete(request), request)

    async def stream(self, request: ChatRequest, on_text: TextSink) -> ChatReply:
        return await self._watch(complete_streaming(self.inner, request, on_text), request)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()

    async def _watch(self, call: Awaitable[T], request: ChatRequest) -> T:
        try:
            result = await call
        except ProviderError as error:
            self.failures.failure(error, request.purpose)
            raise
        self.failures.success()
        return result
