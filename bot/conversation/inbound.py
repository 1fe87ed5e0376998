"""What every channel adapter hands to the conversation handler."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memory.types import SessionKey

InboundKind = Literal["text", "unsupported"]


@dataclass(frozen=True, slots=True)
class Inbound:
    """A message from a user, already converted from the channel's own types.

    `key` is the session key, built by the channel adapter (`str(key)` is the stored form:
    `telegram:<chat_id>`, `whatsapp:<wa_id>`, `console:<name>`);
    `user` is `channel:user_id`, used for operator and allowlist checks; `external_id`
    is the channel's delivery id (Telegram update_id, WhatsApp wamid), unique per key.
    """

    key: SessionKey
    text: str
    external_id: str
    ts: datetime
    user: str
    kind: InboundKind = "text"

    @property
    def channel(self) -> str:
        return self.key.channel
