"""The WhatsApp Cloud API channel: verified webhook intake and Graph API replies.

A POST is acknowledged only after every message in it is durably in the inbox; the turns
run afterwards in the handler's per-chat queues. Checks and parsing are pure functions in
`whatsapp_webhook`; sending lives in `whatsapp_graph`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
import structlog

from bot.channels.whatsapp.graph import GraphSender, SendFailed, Sleep, split_text
from bot.channels.whatsapp.later import LaterDelivery
from bot.channels.whatsapp.markup import to_whatsapp
from bot.channels.whatsapp.webhook import (
    UNKNOWN_KEY,
    Rejected,
    parse_failures,
    parse_messages,
    parse_payload,
    sign,
    verify_challenge,
    verify_signature,
)
from memory.types import SessionKey

if TYPE_CHECKING:
    from bot.conversation.handler import ConversationHandler
    from config.settings import Settings

__all__ = [
    "SendFailed",
    "WhatsAppChannel",
    "parse_payload",
    "sign",
    "split_text",
    "verify_challenge",
    "verify_signature",
]

log = structlog.get_logger(__name__)
CHANNEL = "whatsapp"


class WhatsAppChannel:
    """Registers itself as the handler's `whatsapp` outbox when built."""

    def __init__(
        self,
        handler: ConversationHandler,
        settings: Settings,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        secret, token = settings.whatsapp_app_secret, settings.whatsapp_access_token
        verify, phone = settings.whatsapp_verify_token, settings.whatsapp_phone_number_id
        if secret is None or token is None or verify is None or not phone:
            raise ValueError(
                "WhatsApp needs WHATSAPP_ACCESS_TOKEN, WHATSAPP_PHONE_NUMBER_ID, "
                "WHATSAPP_APP_SECRET and WHATSAPP_VERIFY_TOKEN"
            )
        self.handler = handler
        self.phone_number_id = phone
        self._app_secret = secret.get_secret_value().encode()
        self._verify_token = verify.get_secret_value()
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=5.0))
        self.graph = GraphSender(
            self._client,
            graph_url=settings.whatsapp_graph_url,
            phone_number_id=phone,
            token=token.get_secret_value(),
            sleep=sleep,
        )
        self._sleep = sleep
        self._later: dict[SessionKey, LaterDelivery] = {}  # chats with a send retrying (bounded)
        handler.register(CHANNEL, self)

    # -- webhook ------------------------------------------------------------------------

    def handle_get(self, params: Mapping[str, str]) -> tuple[str, int]:
        """The subscription handshake: `(hub.challenge, 200)` or `("", 403)`."""
        body, status = verify_challenge(params, self._verify_token)
        log.info("whatsapp_verification", status=status)
        return body, status

    async def handle_post(self, raw_body: bytes, signature_header: str | None) -> int:
        """Check, parse and durably queue every message; the status code to answer with."""
        if not signature_header:
            log.warning("whatsapp_unsigned_post")
            return 401
        if not verify_signature(self._app_secret, raw_body, signature_header):
            log.warning("whatsapp_bad_signature")
            return 403
        try:  # signed but malformed: acknowledged and recorded, or Meta resends it for days
            data: Any = json.loads(raw_body)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
            return await self._reject_body(raw_body, "not JSON")
        if not isinstance(data, dict):
            return await self._reject_body(raw_body, "not a JSON object")
        self._log_failures(data)
        return await self._submit_all(data)

    async def _reject_body(self, raw_body: bytes, reason: str) -> int:
        ident = "sha256:" + hashlib.sha256(raw_body).hexdigest()[:32]
        return await self._reject_all([Rejected(UNKNOWN_KEY, ident, reason)])

    async def _reject_all(self, rejected: list[Rejected]) -> int:
        now = datetime.now(UTC)
        try:
            for item in rejected:
                await self.handler.reject(item.key, item.external_id, item.reason, now)
                log.warning("whatsapp_message_rejected", id=item.external_id, reason=item.reason)
        except Exception:
            log.exception("whatsapp_intake_failed")
            return 500  # the database: Meta redelivers
        return 200

    async def _submit_all(self, data: dict[str, Any]) -> int:
        now = datetime.now(UTC)
        messages, rejected = parse_messages(
            data, phone_number_id=self.phone_number_id, received_at=now
        )
        if rejected and await self._reject_all(rejected) != 200:
            return 500
        try:
            for inbound in messages:  # in payload order: per-chat order is arrival order
                future = await self.handler.submit(inbound)
                if future is not None:
                    future.add_done_callback(_consume)
        except Exception:
            log.exception("whatsapp_intake_failed")
            return 500  # Meta redelivers; what was stored is deduplicated then
        if messages:
            log.info("whatsapp_received", messages=len(messages))
        return 200

    def _log_failures(self, data: dict[str, Any]) -> None:
        for failure in parse_failures(data, phone_number_id=self.phone_number_id):
            log.warning(
                "whatsapp_delivery_failed",
                key=failure.key,
                message_id=failure.message_id,
                codes=list(failure.codes),
            )

    # -- outbox -------------------------------------------------------------------------

    async def send(self, key: SessionKey, texts: Sequence[str]) -> asyncio.Future[None] | None:
        """Each text in WhatsApp markup, split at 4096 characters; stops at the first
        permanent refusal.

        One quick attempt per message here; when Graph is slow or failing, the rest is
        retried in the background and the returned future resolves once delivered (the
        handler marks the entry done only then), so the chat's next message is not held
        behind a hung send. Later replies of the same chat queue behind it, in order.
        """
        chunks = [chunk for text in texts for chunk in split_text(to_whatsapp(text))]
        if key in self._later:
            return self._later[key].add(chunks)
        wa_id = key.chat
        for n, chunk in enumerate(chunks):
            try:
                if not await self.graph.send_chunk(wa_id, chunk, retries=0):
                    return None
            except SendFailed:
                return self._retry_later(key, chunks[n:])
        return None

    def _retry_later(self, key: SessionKey, chunks: list[str]) -> asyncio.Future[None]:
        later = LaterDelivery(self.graph, key.chat, self._sleep)
        self._later[key] = later
        future = later.add(chunks)
        later.task.add_done_callback(lambda _: self._later.pop(key, None))
        log.info("whatsapp_send_deferred", key=str(key), chunks=len(chunks))
        return future

    @contextlib.asynccontextmanager
    async def working(self, key: SessionKey) -> AsyncIterator[None]:
        yield

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> int:
        """Queue the WhatsApp inbox entries a previous run left unfinished (before intake)."""
        return await self.handler.recover(CHANNEL)

    async def stop(self) -> None:
        """Close the Graph API client, if it is ours. Call once no turn can send any more.
        Deliveries still retrying are cancelled: their entries stay answered, and are
        delivered at the next start."""
        for later in list(self._later.values()):
            later.task.cancel()
        await asyncio.gather(
            *(later.task for later in self._later.values()), return_exceptions=True
        )
        if self._owns_client:
            await self._client.aclose()


def _consume(future: asyncio.Future[list[str]]) -> None:
    """The queue already logged a failed turn; retrieving it silences asyncio's warning."""
    if not future.cancelled():
        future.exception()
