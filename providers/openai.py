"""`OpenAIChatModel`: our `ChatModel` on the official `openai` SDK (Chat Completions).

With a base URL it serves any OpenAI-compatible server. A local Ollama, for example:

    VENTANA_CHAT_MODEL=openai:llama3.2
    OPENAI_BASE_URL=http://localhost:11434/v1      # no OPENAI_API_KEY needed for a local URL

vLLM (`http://host:8000/v1`), llama.cpp's `llama-server` (`http://host:8080/v1`) and
OpenRouter (`https://openrouter.ai/api/v1`, key required) work the same way.

The key, the base URL, timeouts and `max_retries=0` are passed explicitly, so
`OPENAI_API_KEY` and `OPENAI_BASE_URL` are never read behind our back; the organization
and project the SDK would take from `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID` are cleared.
Only `OPENAI_CUSTOM_HEADERS` cannot be switched off by an argument.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Literal, TypedDict, Unpack

import httpx2
import openai
import pydantic
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam

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
from .sdk import ClientOptions, Options, RetryingChatModel, alternate, translate
from .streaming import TextSink

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TokenParam = Literal["max_completion_tokens", "max_tokens"]

# Compatible servers have no `code`; these are the wordings of OpenAI, vLLM and llama.cpp.
_TOO_LONG = (
    "maximum context length",
    "context length",
    "context window",
    "exceed_context_size",
    "exceeds the available context size",
)
_BUSY = ("overloaded",)
_FINISH_REASONS: dict[str | None, StopReason] = {"stop": "end", "length": "max_tokens"}


def default_token_param(base_url: str | None) -> TokenParam:
    """Which request field carries the reply budget.

    OpenAI itself deprecated `max_tokens` and its reasoning models (o-series, gpt-5)
    reject it, so api.openai.com gets `max_completion_tokens`. Compatible servers
    (Ollama, vLLM, llama.cpp, OpenRouter) have long known `max_tokens`; several ignore
    the newer name silently, which would lift the cap, so they get `max_tokens`.
    """
    if base_url is None or httpx2.URL(base_url).host == "api.openai.com":
        return "max_completion_tokens"
    return "max_tokens"


class _Arguments(TypedDict):
    model: str
    messages: list[ChatCompletionMessageParam]
    max_completion_tokens: int | openai.Omit
    max_tokens: int | openai.Omit
    timeout: float


class OpenAIChatModel(RetryingChatModel):
    """Sends a `ChatRequest` to Chat Completions and maps every failure to a `ProviderError`."""

    _client: openai.AsyncOpenAI

    provider = "openai"
    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self, model: str, *, token_param: TokenParam | None = None, **options: Unpack[Options]
    ) -> None:
        super().__init__(model, **options)
        self.token_param = token_param or default_token_param(options.get("base_url"))

    def _connect(self, options: ClientOptions) -> openai.AsyncOpenAI:
        client = openai.AsyncOpenAI(**options)
        # Filled from OPENAI_ORG_ID / OPENAI_PROJECT_ID when not given; ventana sets neither.
        client.organization = None
        client.project = None
        return client

    def _arguments(self, request: ChatRequest, time_limit: float) -> _Arguments:
        """The Chat Completions arguments of one attempt, streamed or not."""
        budget = request.max_tokens
        modern = self.token_param == "max_completion_tokens"  # noqa: S105 (a field name)
        return {
            "model": self.model,
            "messages": to_message_params(request),
            "max_completion_tokens": budget if modern else openai.omit,
            "max_tokens": openai.omit if modern else budget,
            "timeout": time_limit,
        }

    async def _attempt(self, request: ChatRequest, time_limit: float) -> ChatReply:
        """The body is read through the cap's byte limit, then parsed as the SDK would."""
        completions = self._client.chat.completions.with_streaming_response
        try:
            async with completions.create(**self._arguments(request, time_limit)) as response:
                body = await read_within(response.iter_bytes(), self._body_limit, self.provider)
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise map_error(exc) from exc
        if body is None:
            return self._over_cap()
        completion = ChatCompletion.construct(**json_object(body, self.provider))
        return self._within_cap(to_reply(completion, self.model))

    async def _stream_attempt(
        self, request: ChatRequest, time_limit: float, on_text: TextSink
    ) -> ChatReply:
        parts = StreamParts()
        try:
            chunks = await self._client.chat.completions.create(
                **self._arguments(request, time_limit),
                stream=True,
                stream_options={"include_usage": True},
            )
            if _is_json(chunks.response.headers):  # a server that ignores `stream`
                return await self._unstreamed(chunks.response, on_text)
            async for chunk in chunks:
                if not parts.add(chunk):
                    continue
                if len(parts.text) > self.reply_max_chars:
                    await chunks.close()  # nothing past the cap is read
                    return self._within_cap(parts.reply(self.model))
                await on_text(parts.text)
        except (openai.OpenAIError, json.JSONDecodeError, pydantic.ValidationError) as exc:
            raise map_error(exc) from exc
        return self._within_cap(parts.reply(self.model))

    async def _unstreamed(self, response: httpx2.Response, on_text: TextSink) -> ChatReply:
        """A whole completion where a stream was asked for, read within the cap."""
        body = await read_within(response.aiter_bytes(), self._body_limit, self.provider)
        await response.aclose()
        if body is None:
            return self._over_cap()
        completion = ChatCompletion.model_validate(json_object(body, self.provider))
        reply = self._within_cap(to_reply(completion, self.model))
        await on_text(reply.text)
        return reply


class StreamParts:
    """What the chunks of one streamed completion added up to."""

    def __init__(self) -> None:
        self.text = ""
        self.finish: str | None = None
        self.model = ""
        self.usage = Usage()

    def add(self, chunk: ChatCompletionChunk) -> bool:
        """Take one chunk in; True when the text grew."""
        try:
            self.model = chunk.model or self.model
            if chunk.usage is not None:
                self.usage = to_usage(chunk.usage)
            if not chunk.choices:  # the usage chunk comes with no choice
                return False
            choice = chunk.choices[0]
            self.finish = choice.finish_reason or self.finish
            delta = choice.delta.content or choice.delta.refusal or ""
        except (AttributeError, TypeError) as exc:
            raise ProviderUnavailable("openai: malformed stream chunk") from exc
        self.text += delta
        return bool(delta)

    def reply(self, requested_model: str) -> ChatReply:
        return ChatReply(
            text=valid_text(self.text),
            stop_reason=_FINISH_REASONS.get(self.finish, "other"),
            usage=self.usage,
            model=self.model or requested_model,
        )


def _is_json(headers: Mapping[str, str]) -> bool:
    return headers.get("content-type", "").split(";")[0].strip() == "application/json"


def to_usage(usage: CompletionUsage) -> Usage:
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
    )


def to_reply(completion: ChatCompletion, requested_model: str) -> ChatReply:
    """Convert the SDK's completion; the SDK does not validate, so a wrong shape is caught here."""
    try:
        choice = completion.choices[0]
        text = choice.message.content or choice.message.refusal or ""
        usage = completion.usage
        counted = to_usage(usage) if usage else Usage()
    except (AttributeError, TypeError, IndexError) as exc:
        raise ProviderUnavailable("openai: malformed response") from exc
    stop = _FINISH_REASONS.get(choice.finish_reason, "other")
    return ChatReply(valid_text(text), stop, counted, completion.model or requested_model)


def to_message_params(request: ChatRequest) -> list[ChatCompletionMessageParam]:
    params: list[ChatCompletionMessageParam] = []
    if request.system:
        params.append({"role": "system", "content": request.system})
    return params + [_turn(m) for m in alternate(request.messages)]


def _turn(m: Message) -> ChatCompletionMessageParam:
    if m.role == "user":  # one literal per branch: the SDK's param is a union by role
        return {"role": "user", "content": m.content}
    return {"role": "assistant", "content": m.content}


def map_error(
    exc: openai.OpenAIError | json.JSONDecodeError | pydantic.ValidationError,
) -> ProviderError:
    """Translate an SDK failure into our error types."""
    return translate("openai", exc, openai, status_facts)


def status_facts(exc: openai.APIStatusError) -> ErrorFacts:
    # The SDK unwraps {"error": {...}}, so `body` is the inner object when it was JSON.
    body: Mapping[str, object] = exc.body if isinstance(exc.body, Mapping) else {}
    text = body.get("message")
    message = text if isinstance(text, str) else None
    status, code, kind = exc.status_code, exc.code, exc.type
    return ErrorFacts(
        status=status,
        message=describe("openai", status, code or kind, message),
        retry_after=parse_retry_after(exc.response.headers, now=time.time()),
        context_too_long=status in (400, 413)
        and (code == "context_length_exceeded" or contains_any(message, _TOO_LONG)),
        quota="insufficient_quota" in (code, kind),
        overloaded=kind == "overloaded_error" or (status == 503 and contains_any(message, _BUSY)),
    )
