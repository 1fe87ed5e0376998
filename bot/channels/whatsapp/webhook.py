"""WhatsApp Cloud API webhooks as pure functions: signature, challenge, payload → `Inbound`.

Nothing here does I/O; the channel (`bot/whatsapp.py`) and the HTTP routes (`bot/http.py`)
only translate around these.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeGuard

from bot.conversation.inbound import Inbound
from memory.types import SessionKey

SIGNATURE_PREFIX = "sha256="
UNKNOWN_KEY = "whatsapp:unknown"  # where malformed input without a valid sender is recorded
_WA_ID = re.compile(r"[0-9]{1,20}")  # a WhatsApp id is the phone number, digits only
# Buttons and list picks carry words the user chose: they are text to us.
_IGNORED_TYPES = frozenset({"reaction", "system"})


def sign(app_secret: bytes, raw_body: bytes) -> str:
    """The `X-Hub-Signature-256` value Meta sends for `raw_body`."""
    return SIGNATURE_PREFIX + hmac.new(app_secret, raw_body, hashlib.sha256).hexdigest()


def verify_signature(app_secret: bytes, raw_body: bytes, header: str | None) -> bool:
    """True when `header` is `sha256=<hex>` of HMAC-SHA256(app_secret, raw_body)."""
    if not header or not app_secret:
        return False
    given = header.strip()
    if not given.isascii() or not given.lower().startswith(SIGNATURE_PREFIX):
        return False
    expected = sign(app_secret, raw_body)
    return hmac.compare_digest(expected.encode(), given.lower().encode())


def verify_challenge(params: Mapping[str, str], verify_token: str) -> tuple[str, int]:
    """Meta's subscription handshake: echo `hub.challenge` only to the right token."""
    mode = params.get("hub.mode", "")
    token = params.get("hub.verify_token", "")
    same = bool(verify_token) and hmac.compare_digest(
        token.encode("utf-8", "replace"), verify_token.encode("utf-8", "replace")
    )
    if mode == "subscribe" and same:
        return params.get("hub.challenge", ""), 200
    return "", 403


@dataclass(frozen=True, slots=True)
class DeliveryFailure:
    """A status callback reporting that one of our messages was not delivered."""

    key: str
    message_id: str
    codes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message item that cannot be handled: recorded as rejected, never processed."""

    key: str
    external_id: str
    reason: str


def parse_payload(
    data: object, *, phone_number_id: str | None = None, received_at: datetime | None = None
) -> list[Inbound]:
    """Every user message of a webhook payload, in order; statuses and noise skipped.

    `phone_number_id`, when given, drops messages addressed to another number of the
    same app. `received_at` stands in for a missing or broken `timestamp`.
    """
    return parse_messages(data, phone_number_id=phone_number_id, received_at=received_at)[0]


def parse_messages(
    data: object, *, phone_number_id: str | None = None, received_at: datetime | None = None
) -> tuple[list[Inbound], list[Rejected]]:
    """`parse_payload`, plus the message items that are malformed (no sender, no id)."""
    out: list[Inbound] = []
    rejected: list[Rejected] = []
    for n, (_, message) in enumerate(_values(data, "messages", phone_number_id)):
        inbound = _inbound(message, received_at)
        if isinstance(inbound, Inbound):
            out.append(inbound)
        elif inbound is not None:
            wamid = message.get("id")
            ident = wamid if _is_id(wamid) else f"item:{n}"
            rejected.append(Rejected(UNKNOWN_KEY, ident, inbound))
    return out, rejected


def parse_failures(data: object, *, phone_number_id: str | None = None) -> list[DeliveryFailure]:
    """Status callbacks whose status is `failed` (e.g. 131047, outside the 24-hour window)."""
    out: list[DeliveryFailure] = []
    for _, status in _values(data, "statuses", phone_number_id):
        if status.get("status") != "failed":
            continue
        codes = tuple(e["code"] for e in _dicts(status.get("errors")) if _is_int(e.get("code")))
        key = f"whatsapp:{status.get('recipient_id', '')}"
        out.append(DeliveryFailure(key, str(status.get("id", "")), codes))
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _values(
    data: object, field: str, phone_number_id: str | None
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(value, item) for each dict in `entry[].changes[].value.<field>[]`, shape-checked."""
    if not isinstance(data, dict) or data.get("object") != "whatsapp_business_account":
        return
    for entry in _dicts(data.get("entry")):
        for change in _dicts(entry.get("changes")):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, dict):
                continue
            metadata = value.get("metadata")
            ours = metadata.get("phone_number_id") if isinstance(metadata, dict) else None
            if phone_number_id is not None and ours is not None and str(ours) != phone_number_id:
                continue
            for item in _dicts(value.get(field)):
                yield value, item


def _is_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= 256


def _dicts(items: object) -> Iterator[dict[str, Any]]:
    if isinstance(items, list):
        yield from (item for item in items if isinstance(item, dict))


def _inbound(message: dict[str, Any], received_at: datetime | None) -> Inbound | str | None:
    """The message, why it is malformed, or None when it is ignored by design."""
    wa_id, wamid, kind = message.get("from"), message.get("id"), message.get("type")
    if not isinstance(kind, str):
        return "type is not a string"
    if kind in _IGNORED_TYPES:
        return None
    if not isinstance(wa_id, str) or not _WA_ID.fullmatch(wa_id):
        return "from is not a WhatsApp id"
    if not _is_id(wamid):
        return "id is missing or not a string"
    key = SessionKey("whatsapp", wa_id)
    ts = _timestamp(message.get("timestamp"), received_at)
    text = _text_of(message)
    if text is None:
        return Inbound(key, "", wamid, ts, str(key), kind="unsupported")
    return Inbound(key, text, wamid, ts, str(key))


def _text_of(message: dict[str, Any]) -> str | None:
    """The words of a text, quick-reply button or interactive pick; None for anything else."""
    kind = message.get("type")
    part = message.get(kind) if isinstance(kind, str) else None
    if not isinstance(part, dict):
        return None
    if kind == "text":
        body = part.get("body")
    elif kind == "button":
        body = part.get("text")
    elif kind == "interactive":
        reply = part.get("button_reply") or part.get("list_reply")
        body = reply.get("title") if isinstance(reply, dict) else None
    else:
        return None
    return body if isinstance(body, str) else None


def _timestamp(raw: object, fallback: datetime | None) -> datetime:
    try:
        return datetime.fromtimestamp(int(str(raw)), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return fallback if fallback is not None else datetime.now(UTC)
