"""`AnthropicChatModel`: our `ChatModel` on the official `anthropic` SDK (Messages API).

Everything the SDK would otherwise find on its own is passed in: the key (so neither
`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` nor a profile on disk is consulted), the base
URL (so `ANTHROPIC_BASE_URL` is not), timeouts, `max_retries=0` (our `retry` module owns
retries) and tracing (off; wiring OpenTelemetry is a decision for the program, not for
an adapter). One thing no argument can switch off: the SDK still merges headers from
`ANTHROPIC_CUSTOM_HEADERS` if that variable is set.
"""

from __future__ import annotations

import json
import time
from typing import TypedDict

import anthropic
from anthropic.types import Message as SDKMessage
from anthropic.types import MessageParam

from .base import (
    ChatReply,
    ChatRequest,
    Message,
    ProviderError,
    ProviderUnavailable,
    StopReason,
    Usage,
    valid_text,
)
from .cap import json_object, read_within
from .errors import ErrorFacts, contains_any, describe, parse_retry_after
from .sdk import ClientOptions, RetryingChatModel, alternate, translate
from .streaming import TextSink

DEFAULT_BASE_URL = "https://api.anthropic.com"

# Wordings the API uses for a prompt over the context window; it has no stable code yet.
_TOO_LONG = ("prompt is too long", "exceed context limit", "context window")
_CREDIT = ("credit balance",)
_SPEND_LIMIT_CODES = frozenset({"contract_spend_limit_reached", "enforced_spend_limit_reached"})
_STOP_REASONS: dict[str | None, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
}


class _Arguments(TypedDict):
    model: str
    max_tokens: int
    system: str | anthropic.Omit
    messages: list[MessageParam]
    timeout: float


class AnthropicChatModel(RetryingChatModel):
    """Sends a `ChatRequest` to the Messages API and maps every failure to a `ProviderError`."""

    _client: anthropic.AsyncAnthropic

    provider = "anthropic"
    default_base_url = DEFAULT_BASE_URL

    def _connect(self, options: ClientOptions) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(**options, open_telemetry=False)

    async def _attempt(self, request: ChatRequest, time_limit: float) -> ChatReply:
        """The body is read through the cap's byte limit, then parsed as the SDK would."""
        messages = self._client.messages.with_streaming_response
        try:
            async with messages.create(**self._arguments(request, time_limit)) as response:
                body = await read_within(response.iter_bytes(), self._body_limit, self.provider)
        except (anthropic.AnthropicError, json.JSONDecodeError) as exc:
            raise map_error(exc) from exc
        if body is None:
            return self._over_cap()
        message = SDKMessage.construct(**json_object(body, self.provider))
        return self._within_cap(to_reply(message, self.model))

    def _arguments(self, request: ChatRequest, time_limit: float) -> _Arguments:
        """The Messages API arguments of one attempt, streamed or not."""
        return {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": request.system or anthropic.omit,
            "messages": to_message_params(request),
            "timeout": time_limit,
        }

    async def _stream_attempt(
        self, request: ChatRequest, time_limit: float, on_text: TextSink
    ) -> ChatReply:
        text = ""
        try:
            async with self._client.messages.stream(
                **self._arguments(request, time_limit)
            ) as events:
                async for delta in events.text_stream:
                    text += delta
                    if len(text) > self.reply_max_chars:  # leaving drops the stream
                        return self._within_cap(ChatReply(text, model=self.model))
                    await on_text(text)
                message = await events.get_final_message()
        except (anthropic.AnthropicError, json.JSONDecodeError) as exc:
            raise map_error(exc) from exc
        return self._within_cap(to_reply(message, self.model))


def to_message_params(request: ChatRequest) -> list[MessageParam]:
    return [_turn(m) for m in alternate(request.messages)]


def _turn(m: Message) -> MessageParam:
    if m.role == "user":  # one literal per branch: the SDK's param is a union by role
        return {"role": "user", "content": m.content}
    return {"role": "assistant", "content": m.content}


def to_reply(message: SDKMessage, requested_model: str) -> ChatReply:
    """Convert the SDK's message; the SDK does not validate, so a wrong shape is caught here."""
    try:
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage
        prompt = usage.input_tokens + (usage.cache_creation_input_tokens or 0)
        prompt += usage.cache_read_input_tokens or 0
        counted = Usage(
            input_tokens=prompt,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cache_read_input_tokens or 0,
        )
    except (AttributeError, TypeError) as exc:
        raise ProviderUnavailable("anthropic: malformed response") from exc
    stop = _STOP_REASONS.get(message.stop_reason, "other")
    return ChatReply(valid_text(text), stop, counted, message.model or requested_model)


def map_error(exc: anthropic.AnthropicError | json.JSONDecodeError) -> ProviderError:
    """Translate an SDK failure into our error types."""
    return translate("anthropic", exc, anthropic, status_facts)


def status_facts(exc: anthropic.APIStatusError) -> ErrorFacts:
    status, kind, text = exc.status_code, exc.type, exc.api_message
    return ErrorFacts(
        status=status,
        message=describe("anthropic", status, kind or exc.error_code, text),
        retry_after=parse_retry_after(exc.response.headers, now=time.time()),
        context_too_long=status == 413 or (status == 400 and contains_any(text, _TOO_LONG)),
        quota=kind == "billing_error"
        or exc.error_code in _SPEND_LIMIT_CODES
        or contains_any(text, _CREDIT),
        overloaded=kind == "overloaded_error",
    )
