"""Model Markdown as Telegram text plus entities (no parse mode), split to the limit.

`telegramify-markdown` does the rendering and the entity-preserving split. Whatever it
cannot render faithfully is sent as plain text instead: its parser drops raw HTML
(`<memory …>` in a debug view, a model's `<br>`), so a rendering that lost any letter
or digit of the source (link targets and code languages count, they move into entities)
is refused. A failed render never becomes a failed send.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import structlog
import telegramify_markdown as tm
from telegram import MessageEntity

from bot.channels.split import TELEGRAM_LIMIT, split_message

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One Telegram message: its text and the entities that format it."""

    text: str
    entities: tuple[MessageEntity, ...] = ()


def _config() -> tm.RenderConfig:
    config = tm.RenderConfig.isolated()
    symbols = config.markdown_symbol
    for level in range(1, 7):  # headings become bold lines, without emoji prefixes
        setattr(symbols, f"heading_level_{level}", "")
    symbols.unordered_list_item = "•"
    return config


_CONFIG = _config()


def render(markdown: str) -> tuple[str, list[tm.MessageEntity]] | None:
    """Plain text and entities, or None when the Markdown cannot be rendered faithfully."""
    try:
        text, entities = tm.convert(markdown, latex_escape=False, config=_CONFIG)
    except Exception as exc:  # a converter bug must not cost the reply
        log.info("markup_render_failed", error=type(exc).__name__)
        return None
    moved = "".join((e.url or "") + (e.language or "") for e in entities)
    if not _letters(markdown) <= _letters(text + moved):
        return None
    return text.strip("\n"), entities


def telegram_chunks(markdown: str, limit: int = TELEGRAM_LIMIT) -> list[Chunk]:
    """The messages for one reply: rendered and split keeping entities, else plain."""
    rendered = render(markdown)
    if rendered is None or not rendered[1]:
        return plain_chunks(markdown if rendered is None else rendered[0], limit)
    text, entities = rendered
    return [
        Chunk(part, tuple(_ptb(e) for e in ents))
        for part, ents in tm.split_entities(text, entities, max_utf16_len=limit)
    ]


def plain_chunks(text: str, limit: int = TELEGRAM_LIMIT) -> list[Chunk]:
    return [Chunk(part) for part in split_message(text, limit)]


def _ptb(entity: tm.MessageEntity) -> MessageEntity:
    return MessageEntity(
        type=entity.type,
        offset=entity.offset,
        length=entity.length,
        url=entity.url,
        language=entity.language,
    )


def _letters(text: str) -> Counter[str]:
    return Counter(char for char in text if char.isalnum())
