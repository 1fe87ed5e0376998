"""Erasure tombstones, on every backend (`store` runs once per backend of
`conftest.BACKENDS`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.store import Store
from memory.types import Arrival

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


async def test_a_forgotten_delivery_replayed_is_refused_until_its_tombstone_ages_out(
    store: Store,
) -> None:
    """After /forget the key's delivery ids stay as hashed tombstones: the same delivery
    again (a captured webhook replayed) is refused as a redelivery by both intakes,
    nothing of it stored; a new delivery id is taken; pruning drops old tombstones."""
    key = "whatsapp:34600999888"
    await store.inbox_add(key, "wamid.A", key, "text", "mi IBAN es ES91 2100 0418", T0)
    assert await store.forget(key) >= 1
    again = Arrival(key, "wamid.A", key, "text", "mi IBAN es ES91 2100 0418", T0)
    intake = await store.begin_turn(again, 6)
    assert intake.entry is None
    assert not intake.debug
    assert await store.inbox_add(key, "wamid.A", key, "text", "otra vez", T0) is None
    assert await store.inbox_get(key, "wamid.A") is None
    assert await store.peek_state(key, 3) is None  # no session brought back either
    fresh = await store.begin_turn(Arrival(key, "wamid.B", key, "text", "hola", T0), 6)
    assert fresh.entry is not None
    await store.inbox_prune(datetime.now(UTC) + timedelta(days=1))
    assert (await store.begin_turn(again, 6)).entry is not None  # the tombstone aged out
