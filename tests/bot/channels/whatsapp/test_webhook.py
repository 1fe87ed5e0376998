"""The pure webhook functions: signature, challenge, payload parsing, failed statuses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.channels.whatsapp.webhook import (
    parse_failures,
    parse_payload,
    sign,
    verify_challenge,
    verify_signature,
)
from tests.support.whatsapp import APP_SECRET, LUCIA, PHONE_ID, TOMAS, golden, golden_json

VECTORS = golden_json("signature_vectors.json")["vectors"]


def _vector_body(vector: dict[str, str]) -> bytes:
    return golden(vector["body_file"]) if "body_file" in vector else vector["body"].encode()


@pytest.mark.parametrize("vector", VECTORS, ids=[v["app_secret"] for v in VECTORS])
def test_signature_matches_known_answers(vector: dict[str, str]) -> None:
    """HMAC-SHA256 of the raw body gives exactly the hex computed outside Python."""
    body = _vector_body(vector)
    assert sign(vector["app_secret"].encode(), body) == vector["signature"]
    assert verify_signature(vector["app_secret"].encode(), body, vector["signature"])


def test_signature_accepts_uppercase_hex() -> None:
    """Hex case does not matter; the `sha256=` prefix is required."""
    vector = VECTORS[0]
    header = "sha256=" + vector["signature"].removeprefix("sha256=").upper()
    assert verify_signature(vector["app_secret"].encode(), vector["body"].encode(), header)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=",
        "sha1=1b31d34c5af04f762d603ea5ff770b1125539013",
        "1b31d34c5af04f762d603ea5ff770b1125539013d0e1b03cd39fe42548d6f83f",
        "sha256=1b31d34c5af04f762d603ea5ff770b1125539013d0e1b03cd39fe42548d6f83e",
        "sha256=ñ1b31d34c5af04f762d603ea5ff770b1125539013d0e1b03cd39fe42548d6f83",
    ],
)
def test_signature_rejects_anything_else(header: str | None) -> None:
    """Missing, truncated, other algorithms, off by one digit or non-ASCII: all refused."""
    vector = VECTORS[0]
    assert not verify_signature(vector["app_secret"].encode(), vector["body"].encode(), header)


def test_signature_covers_the_exact_bytes() -> None:
    """Re-serialized JSON (same data, other bytes) no longer matches."""
    body = golden("text.json")
    header = sign(APP_SECRET.encode(), body)
    assert not verify_signature(APP_SECRET.encode(), body.replace(b"  ", b" "), header)
    assert not verify_signature(b"another-secret", body, header)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"hub.mode": "subscribe", "hub.verify_token": "tok", "hub.challenge": "1158201444"},
            ("1158201444", 200),
        ),
        ({"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"}, ("", 403)),
        ({"hub.mode": "unsubscribe", "hub.verify_token": "tok", "hub.challenge": "1"}, ("", 403)),
        ({"hub.verify_token": "tok", "hub.challenge": "1"}, ("", 403)),
        ({"hub.mode": "subscribe", "hub.challenge": "1"}, ("", 403)),
        ({"hub.mode": "subscribe", "hub.verify_token": "tök", "hub.challenge": "1"}, ("", 403)),
    ],
)
def test_challenge(params: dict[str, str], expected: tuple[str, int]) -> None:
    """Only `subscribe` with the right token echoes the challenge."""
    assert verify_challenge(params, "tok") == expected


def test_challenge_never_matches_an_empty_token() -> None:
    """An empty configured token cannot be matched by an empty parameter."""
    params = {"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"}
    assert verify_challenge(params, "") == ("", 403)


def test_text_message_becomes_an_inbound() -> None:
    """Key and user are `whatsapp:<from>`, the wamid is the external id, ts from `timestamp`."""
    [inbound] = parse_payload(golden_json("text.json"))
    assert str(inbound.key) == inbound.user == LUCIA
    assert inbound.text == "Hola, ¿me ayudas con mi pedido #4821?"
    assert inbound.external_id.startswith("wamid.HBgN")
    assert inbound.ts == datetime.fromtimestamp(1718900000, UTC)
    assert inbound.kind == "text"


def test_image_is_unsupported() -> None:
    """An image (even with a caption) is marked unsupported and carries no text."""
    [inbound] = parse_payload(golden_json("image.json"))
    assert (inbound.kind, inbound.text, str(inbound.key)) == ("unsupported", "", LUCIA)


def test_other_message_types() -> None:
    """Media and locations are unsupported, buttons and list picks are text, reactions ignored."""
    found = {
        i.external_id: (i.kind, i.text) for i in parse_payload(golden_json("other_types.json"))
    }
    assert found == {
        "wamid.AUDIO": ("unsupported", ""),
        "wamid.STICKER": ("unsupported", ""),
        "wamid.DOCUMENT": ("unsupported", ""),
        "wamid.LOCATION": ("unsupported", ""),
        "wamid.UNSUPPORTED": ("unsupported", ""),
        "wamid.BUTTON": ("text", "Confirmar"),
        "wamid.LIST": ("text", "Envío express"),
    }


def test_statuses_are_not_messages() -> None:
    """Status callbacks produce no inbound message."""
    assert parse_payload(golden_json("status.json")) == []
    assert parse_failures(golden_json("status.json")) == []


def test_failed_status_is_reported() -> None:
    """A `failed` status yields the recipient's key and its error codes (131047 here)."""
    [failure] = parse_failures(golden_json("status_failed.json"))
    assert failure.key == LUCIA
    assert failure.codes == (131047,)


def test_batched_payload_keeps_order() -> None:
    """Every message of every entry and change, in payload order."""
    found = [(str(i.key), i.text) for i in parse_payload(golden_json("batched.json"))]
    assert found == [(LUCIA, "uno"), (TOMAS, "hola desde Madrid"), (LUCIA, "dos"), (LUCIA, "tres")]


def test_other_phone_numbers_are_skipped() -> None:
    """Messages to another number of the same app are not ours to answer."""
    data = golden_json("text.json")
    assert parse_payload(data, phone_number_id=PHONE_ID) != []
    assert parse_payload(data, phone_number_id="999") == []


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "text",
        {"object": "page", "entry": []},
        {"object": "whatsapp_business_account"},
        {"object": "whatsapp_business_account", "entry": "x"},
        {"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages"}]}]},
        {
            "object": "whatsapp_business_account",
            "entry": [
                {"changes": [{"field": "messages", "value": {"messages": [{"id": "w"}, 3]}}]}
            ],
        },
    ],
)
def test_odd_shapes_yield_nothing(data: object) -> None:
    """Unexpected shapes are skipped, never raised on."""
    assert parse_payload(data) == []
    assert parse_failures(data) == []


def test_broken_timestamp_falls_back() -> None:
    """A missing or unparsable timestamp takes the receive time."""
    data = golden_json("text.json")
    data["entry"][0]["changes"][0]["value"]["messages"][0]["timestamp"] = "soon"
    received = datetime(2024, 6, 20, tzinfo=UTC)
    [inbound] = parse_payload(data, received_at=received)
    assert inbound.ts == received
