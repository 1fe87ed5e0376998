"""The store ports: conversation memory (`ConversationStore`) and the delivery inbox
(`DeliveryInbox`); one package per backend (`sqlite/`)."""

from __future__ import annotations

from typing import Protocol

from memory.store.conversation import ConversationStore
from memory.store.inbox import DeliveryInbox


class Store(ConversationStore, DeliveryInbox, Protocol):
    """One backend holding both ports, so a turn's exchange and its inbox entry's
    "answered" mark commit in one transaction."""
