"""The session key as a type: parsed once, printed back in the stored form."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.types import InboxEntry, SessionKey

NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("telegram:12345", SessionKey("telegram", "12345")),
        ("telegram:-100200:77", SessionKey("telegram", "-100200", "77")),
        ("whatsapp:34600111222", SessionKey("whatsapp", "34600111222")),
        ("console:ana", SessionKey("console", "ana")),
        ("console:a:b", SessionKey("console", "a:b")),
    ],
)
def test_parse_and_str_round_trip(text: str, key: SessionKey) -> None:
    """Each stored form parses into channel, chat and member, and `str()` gives it back;
    only a Telegram key has a group member part."""
    assert SessionKey.parse(text) == key
    assert str(key) == text


def test_keys_of_different_channels_differ() -> None:
    """The same id on two channels is two different keys."""
    assert SessionKey.parse("telegram:5") != SessionKey.parse("whatsapp:5")


def test_an_inbox_row_gives_back_its_key_as_a_type() -> None:
    """An inbox entry read from the database names its session by channel, chat and member."""
    entry = InboxEntry(1, "telegram:-100200:77", "u1", "telegram:77", "text", "hola", NOW)
    assert entry.session == SessionKey("telegram", "-100200", "77")
    assert str(entry.session) == entry.key
