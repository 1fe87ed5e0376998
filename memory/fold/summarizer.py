"""The summarizer seam fold-in uses, the model-backed summarizer and `fold_text`.

`fold_text` is the whole fold of one batch: summarize, check the hard facts, retry once
with the missing ones, guard. The caller persists the outcome (or keeps the previous
version when it was rejected).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Protocol, runtime_checkable

from memory.blocks import neutralize
from memory.facts import Fact, dedupe, extract_facts, missing_facts
from memory.fold.guard import GuardResult, guard_summary
from memory.fold.inwords import ASSISTANT, KEY_FACTS_HEADING, USER
from memory.fold.keyfacts import in_case, salient_facts
from memory.tokens import Tokenizer
from memory.types import Exchange
from providers.base import ChatModel, ChatRequest, Message, ProviderError

_LANGUAGES = {"es": "Spanish (es)", "en": "English (en)"}
_PROMPT_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True, slots=True)
class FoldInput:
    """One summarize request: fold `exchanges` into `previous`, restating `missing`."""

    previous: str
    exchanges: Sequence[Exchange]
    missing: Sequence[Fact] = ()
    language: str = "es"
    max_tokens: int = 800


def source_tokens(
    count: Callable[[str], int], previous: str, exchanges: Sequence[Exchange]
) -> int:
    """Tokens of what a fold reads: the previous summary and both sides of each exchange."""
    return count(previous) + sum(count(e.user_text) + count(e.reply_text) for e in exchanges)


@dataclass(frozen=True, slots=True)
class SummaryDraft:
    text: str
    input_tokens: int
    output_tokens: int
    model: str
    truncated: bool = False


@runtime_checkable
class Summarizer(Protocol):
    name: str  # model name recorded with the version
    prompt_version: str  # e.g. "fold-v1"

    async def summarize(self, request: FoldInput) -> SummaryDraft: ...


def load_prompt(version: str) -> str:
    """The fold-in prompt `config/prompts/<version>.md`, read as package data."""
    if not _PROMPT_NAME.fullmatch(version):
        raise ValueError(f"bad prompt version: {version!r}")
    return (
        resources.files("config")
        .joinpath("prompts")
        .joinpath(f"{version}.md")
        .read_text(encoding="utf-8")
    )


class ModelSummarizer:
    """Folds with a (cheaper) chat model and a versioned prompt."""

    def __init__(self, model: ChatModel, prompt_version: str = "fold-v1") -> None:
        self.model = model
        self.name = model.name
        self.prompt_version = prompt_version
        self.prompt = load_prompt(prompt_version)

    async def summarize(self, request: FoldInput) -> SummaryDraft:
        """One fold request (purpose "fold"); a `ProviderError` propagates."""
        content = render_fold_input(
            request.previous, request.exchanges, missing=request.missing, language=request.language
        )
        chat = ChatRequest(
            system=self.prompt,
            messages=(Message("user", content),),
            max_tokens=request.max_tokens,
            purpose="fold",
            language=request.language,
        )
        reply = await self.model.complete(chat)
        return SummaryDraft(
            text=reply.text.strip(),
            input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens,
            model=reply.model or self.name,
            truncated=reply.stop_reason == "max_tokens",
        )


def render_fold_input(
    previous: str, exchanges: Sequence[Exchange], *, missing: Sequence[Fact] = (), language: str
) -> str:
    """The user turn of a fold request: previous summary, transcript, must-keep list."""
    empty = "(ninguno)" if language.startswith("es") else "(none)"
    turns = "\n\n".join(
        f"User: {_quote(e.user_text)}\nAssistant: {_quote(e.reply_text)}" for e in exchanges
    )
    parts = [
        f"<previous_summary>\n{_quote(previous) or empty}\n</previous_summary>",
        f"<transcript>\n{turns or empty}\n</transcript>",
    ]
    if missing:
        listed = "\n".join(f"- {_quote(f.value)}" for f in missing)
        parts.append(f"<must_keep>\n{listed}\n</must_keep>")
    name = _LANGUAGES.get(language[:2], language)
    parts.append(f"Conversation language: {name}. Write the updated summary now.")
    return "\n\n".join(parts)


def _quote(text: str) -> str:
    """Conversation text made unable to close our blocks or fake a speaker line."""
    # Every reserved tag, not only the fold input's: a model that copies its input must
    # not carry a `</memory>` into the summary (invariant 11).
    safe = neutralize(text.strip())
    return "\n  ".join(safe.splitlines())


@dataclass(frozen=True, slots=True)
class FoldOutcome:
    """What a fold produced. When `rejected` is set, `text` is the previous summary."""

    text: str
    rejected: str | None
    input_tokens: int
    output_tokens: int
    calls: int
    model: str
    required: tuple[Fact, ...] = ()
    missing_after: tuple[Fact, ...] = ()
    dropped: tuple[Fact, ...] = ()

    @property
    def ok(self) -> bool:
        return self.rejected is None


def required_facts(previous: str, exchanges: Sequence[Exchange]) -> list[Fact]:
    """Hard facts a new summary must keep: the previous summary's and the folded turns'.

    Oldest first: the previous key-facts section (facts carried from earliest folds), then
    the rest of the previous summary, then the folded turns. The cap relies on that order
    to keep the identifiers and contacts that were given first."""
    texts = tuple(text for e in exchanges for text in (e.user_text, e.reply_text))
    return list(_required_facts(previous, texts))


@lru_cache(maxsize=64)
def _required_facts(previous: str, texts: tuple[str, ...]) -> tuple[Fact, ...]:
    """Cached: a fold asks twice (`fold_text`, then the extractive summarizer)."""
    body, carried = split_key_facts(previous)
    # Whole texts, not line by line: a model may wrap a line inside a date ("15 de\n
    # julio"), and a fact missed here would not be guarded in the next fold.
    # Routine times and percentages ("lo probé a las 14:30") are not required; one the
    # text ties to a commitment is. Those already under key facts stay required.
    found = extract_facts(carried) + salient_facts(body)
    for text in texts:
        found += salient_facts(text)
    return tuple(in_case(dedupe(found)))


def split_key_facts(summary: str) -> tuple[str, str]:
    """(body, key-facts section) of a summary written by the guard or the extractive
    summarizer: the text before and after its heading line ("" when there is none)."""
    for heading in KEY_FACTS_HEADING.values():
        body, found, section = ("\n" + summary).rpartition("\n" + heading)
        if found:
            return body[1:], section
    return summary, ""


async def fold_text(
    summarizer: Summarizer,
    previous: str,
    exchanges: Sequence[Exchange],
    *,
    language: str,
    cap_tokens: int,
    tokenizer: Tokenizer,
    pinned: frozenset[Fact] = frozenset(),
) -> FoldOutcome:
    """Summarize; if facts are missing or the draft is unusable, retry once; then guard.

    Noise exchanges are left out defensively. A `ProviderError` on the first call
    propagates (nothing changes); one on the retry falls back to the first draft.
    """
    signal = [e for e in exchanges if e.signal]
    required = required_facts(previous, signal)
    source = source_tokens(tokenizer.count, previous, signal)

    def guard(draft: SummaryDraft) -> GuardResult:
        return guard_summary(
            _drop_partial_tail(draft.text) if draft.truncated else draft.text,
            required=required,
            previous_text=previous,
            language=language,
            cap_tokens=cap_tokens,
            count_tokens=tokenizer.count,
            source_tokens=source,
            pinned=pinned,
            sources=[(t, who) for e in signal for t, who in spoken(e)],
        )

    request = FoldInput(previous, signal, language=language, max_tokens=cap_tokens)
    first = await summarizer.summarize(request)
    drafts, result = [first], guard(first)
    missing = missing_facts(required, first.text)
    if missing or not result.ok:
        try:
            second = await summarizer.summarize(replace(request, missing=missing))
        except ProviderError:
            second = None
        if second is not None:
            drafts.append(second)
            retried = guard(second)
            result = retried if retried.ok or not result.ok else result
    return FoldOutcome(
        text=result.text,
        rejected=result.reject_reason,
        input_tokens=sum(d.input_tokens for d in drafts),
        output_tokens=sum(d.output_tokens for d in drafts),
        calls=len(drafts),
        model=drafts[-1].model or summarizer.name,
        required=tuple(required),
        missing_after=result.missing_after,
        dropped=result.dropped,
    )


def spoken(exchange: Exchange) -> tuple[tuple[str, str], tuple[str, str]]:
    """An exchange's texts and who wrote each (`memory.fold.inwords`)."""
    return (exchange.user_text, USER), (exchange.reply_text, ASSISTANT)


def _drop_partial_tail(text: str) -> str:
    """A draft cut at the token limit loses its unfinished last sentence, if that is small."""
    stripped = text.rstrip()
    if not stripped or stripped[-1] in '.!?…»")':
        return stripped
    cut = max(stripped.rfind("\n"), *(stripped.rfind(p) + 1 for p in ".!?"))
    return stripped[:cut].rstrip() if cut >= len(stripped) // 2 else stripped
