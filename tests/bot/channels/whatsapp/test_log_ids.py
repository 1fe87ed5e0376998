"""WhatsApp message ids (wamids) base64-decode to the sender's phone number: above debug
every log line names them by a keyed hash, as session keys are named."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from config.logging import Pseudonymize, pseudonym
from tests.support.fakes import ScriptedChatModel, respuesta
from tests.support.whatsapp import FakeGraph, golden, golden_json
from tests.support.whatsapp_rig import WhatsAppRig

SECRET = b"per-install-secret"
PHONE = "5491155550101"
EVENTS = ("duplicate_ignored", "whatsapp_message_rejected", "whatsapp_delivery_failed")


@pytest.fixture
async def rig(tmp_path: Path, graph: FakeGraph) -> AsyncIterator[WhatsAppRig]:
    opened = await WhatsAppRig.open(tmp_path / "v.db", graph, ScriptedChatModel(reply=respuesta))
    yield opened
    await opened.aclose()


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    with structlog.testing.capture_logs(processors=[Pseudonymize(SECRET)]) as seen:
        yield seen


def _wamids(payload: Any) -> set[str]:
    text = json.dumps(payload)
    return {part.split('"')[0] for part in text.split('"wamid.')[1:]}


def _no_sender(payload: Any) -> bytes:
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["from"] = {"id": "abc"}
    return json.dumps(payload).encode()


async def _provoke_every_id_event(rig: WhatsAppRig) -> None:
    await rig.deliver(golden("text.json"))
    await rig.deliver(golden("text.json"))  # Meta's redelivery: duplicate_ignored
    no_sender = golden_json("text.json")
    no_sender["entry"][0]["changes"][0]["value"]["messages"][0]["id"] = "wamid.REJECTED1"
    await rig.deliver(_no_sender(no_sender))  # whatsapp_message_rejected
    await rig.deliver(golden("status_failed.json"))  # whatsapp_delivery_failed


async def test_wamids_are_hashed_in_every_log_line(
    rig: WhatsAppRig, logs: list[dict[str, Any]]
) -> None:
    """duplicate_ignored, whatsapp_message_rejected and whatsapp_delivery_failed: no raw wamid."""
    await _provoke_every_id_event(rig)
    assert {e["event"] for e in logs} >= set(EVENTS)
    seen = repr(logs)
    assert "wamid." not in seen
    for wamid in _wamids(golden_json("text.json")) | _wamids(golden_json("status_failed.json")):
        assert wamid not in seen
        assert PHONE in base64.b64decode(wamid).decode("latin-1")  # why it matters
    for event in (e for e in logs if e["event"] in EVENTS):
        ids = [v for k, v in event.items() if k in ("id", "external_id", "message_id")]
        assert ids
        assert all(str(v).startswith("wamid:~") for v in ids), event


def test_the_hash_is_the_key_pseudonym_of_the_wamid() -> None:
    """Stable for one secret (a line can be matched to a later one), unlinkable without it."""
    processor = Pseudonymize(SECRET)
    event = processor(None, "info", {"external_id": "wamid.ABC=", "key": "whatsapp:" + PHONE})
    assert event["external_id"] == pseudonym(SECRET, "wamid:ABC=")
    assert event["external_id"].startswith("wamid:~")
    assert Pseudonymize(b"other")(None, "info", {"id": "wamid.ABC="})["id"] != event["external_id"]


def test_at_debug_the_raw_wamid_is_kept_beside_its_hash() -> None:
    """As for keys: debug shows the raw id with its pseudonym to correlate."""
    event = Pseudonymize(SECRET)(None, "debug", {"message_id": "wamid.ABC="})
    assert event["message_id"] == "wamid.ABC="
    assert event["message_id_pseudonym"] == pseudonym(SECRET, "wamid:ABC=")
