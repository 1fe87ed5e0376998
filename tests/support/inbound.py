"""`Inbound` messages as a channel adapter builds them, from a test's string session key."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.conversation.inbound import Inbound
from memory.types import SessionKey


def inbound(
    key: str, text: str, external_id: str, user: str | None = None, *, ts: datetime | None = None
) -> Inbound:
    """The message `user` (by default the key itself) sends under `key`, now unless `ts`."""
    when = ts if ts is not None else datetime.now(UTC)
    return Inbound(SessionKey.parse(key), text, external_id, when, user or key)
