"""Model Markdown as WhatsApp markup: `*bold*`, `_italic_`, `~strike~`, ```monospace```.

Parsed with markdown-it (CommonMark, plus tables and strikethrough), rendered by hand
because WhatsApp's markup is tiny: headers become bold lines, list items keep a bullet
or their number, links read `text (url)`, quotes keep `> `, raw HTML stays as written.
Anything the renderer cannot handle sends the text as the model wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from markdown_it import MarkdownIt
from markdown_it.token import Token

log = structlog.get_logger(__name__)

_MD = MarkdownIt("commonmark").enable(["strikethrough", "table"])
_WRAP = {"strong": "*", "em": "_", "s": "~"}


def to_whatsapp(markdown: str) -> str:
    """The same message in WhatsApp's markup; the source itself if rendering fails."""
    try:
        return _Blocks(_MD.parse(markdown)).render().strip() or markdown
    except Exception as exc:  # a renderer bug must not cost the reply
        log.info("whatsapp_markup_failed", error=type(exc).__name__)
        return markdown


class _Blocks:
    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = tokens
        self.out: list[str] = []
        self.lists: list[list[int]] = []  # per open list: [next number] or [] for bullets
        self.quote = 0
        self.heading = False  # the previous token opened a heading

    def render(self) -> str:
        self.heading = False
        for token in self.tokens:
            self._block(token)
            self.heading = token.type == "heading_open"
        return "".join(self.out)

    def _block(self, token: Token) -> None:
        kind = token.type
        if kind == "heading_open" or (kind == "paragraph_open" and not self.lists):
            self._start()
        elif kind == "inline":
            text = inline(token.children or [])
            self.out.append(f"*{text.strip()}*" if self.heading and text.strip() else text)
        elif kind in ("paragraph_close", "heading_close"):
            self.out.append("\n" if self.lists else "\n\n")
        elif kind in ("bullet_list_open", "ordered_list_open"):
            self.lists.append([int(token.attrGet("start") or 1)] if "ordered" in kind else [])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            if not self.lists:
                self.out.append("\n")
        elif kind == "list_item_open":
            self._item()
        elif kind in ("fence", "code_block"):
            self._start()
            self.out.append(f"```\n{token.content.rstrip(chr(10))}\n```\n\n")
        elif kind == "blockquote_open":
            self.quote += 1
        elif kind == "blockquote_close":
            self.quote -= 1
        elif kind == "hr":
            self.out.append("———\n\n")
        elif kind == "html_block":
            self.out.append(token.content + "\n")
        elif kind in ("tr_close",):
            self.out.append("\n")
        elif kind in ("th_open", "td_open") and self.out and not self.out[-1].endswith("\n"):
            self.out.append(" | ")

    def _start(self) -> None:
        if self.quote:
            self.out.append("> " * self.quote)

    def _item(self) -> None:
        depth = len(self.lists) - 1
        numbers = self.lists[-1]
        marker = f"{numbers[0]}." if numbers else "•"
        if numbers:
            numbers[0] += 1
        self.out.append("  " * depth + ("> " * self.quote) + marker + " ")


def inline(children: Sequence[Token]) -> str:
    parts: list[str] = []
    link: list[str] = []  # the href of each open link
    for child in children:
        kind = child.type
        if kind == "text":
            parts.append(child.content)
        elif kind == "code_inline":
            parts.append(f"```{child.content}```")
        elif kind in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif kind.endswith("_open") and kind[:-5] in _WRAP:
            parts.append(_WRAP[kind[:-5]])
        elif kind.endswith("_close") and kind[:-6] in _WRAP:
            parts.append(_WRAP[kind[:-6]])
        elif kind == "link_open":
            link.append(str(child.attrGet("href") or ""))
            parts.append("\x00")  # where the link text starts
        elif kind == "link_close":
            _close_link(parts, link.pop())
        elif kind == "image":
            src = child.attrGet("src")
            parts.append(f"{child.content} ({src})" if child.content else str(src))
        elif kind == "html_inline":
            parts.append(child.content)
    return "".join(parts)


def _close_link(parts: list[str], href: str) -> None:
    start = len(parts) - 1 - parts[::-1].index("\x00")
    text = "".join(parts[start + 1 :])
    del parts[start:]
    same = text.strip() in (href, href.removeprefix("mailto:"))
    parts.append(text if same or not href else f"{text} ({href})")
