"""Shape the message list the way strict chat APIs demand it."""

from __future__ import annotations

from collections.abc import Iterable

from .base import Message


def alternate(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Drop blank messages and join neighbours of the same role with a blank line.

    The Anthropic API rejects empty text and two turns of one role in a row; so do many
    chat templates behind OpenAI-compatible servers (Mistral, Llama on vLLM). Joining
    keeps every word, which dropping or reordering would not.
    """
    merged: list[Message] = []
    for message in messages:
        if not message.content.strip():
            continue
        if merged and merged[-1].role == message.role:
            joined = f"{merged[-1].content}\n\n{message.content}"
            merged[-1] = Message(message.role, joined)
        else:
            merged.append(message)
    return tuple(merged)
