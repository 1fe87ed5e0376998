"""The meaning features (`memory.topic.features.meaning`): a sentence embedding's cosines."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.recall import dense
from memory.topic.context import TopicContext
from memory.topic.features import FEATURES, MEANING, extract, meaning
from memory.types import Exchange

NOW = datetime(2026, 3, 2, 9, tzinfo=UTC)
WINDOW = (
    Exchange(
        1,
        1,
        "my card was charged twice for the same order",
        "Sorry about that: I can see a double payment and I will refund one of them.",
    ),
)


def ctx(message: str, window: tuple[Exchange, ...] = WINDOW) -> TopicContext:
    return TopicContext(message, window, "", NOW, None, 0.0, 0, "en")


def test_a_message_near_in_meaning_reads_nearer_than_an_unrelated_one() -> None:
    """The refund question shares almost no word with the window but sits near it."""
    near = meaning(ctx("when will the money for the duplicate charge be back?"))
    far = meaning(ctx("what's the weather like in paris this weekend?"))
    assert near[0] == far[0] == 1.0
    assert near[2] > far[2] + 0.3  # the last reply
    assert near[3] > far[3] + 0.3  # the window as a whole
    assert near[1] > far[1]


def test_no_content_word_or_no_window_reads_not_measured() -> None:
    """ "thanks!" has no content word; a first message has no window: all zeros."""
    assert meaning(ctx("thanks!")) == (0.0, 0.0, 0.0, 0.0)
    assert meaning(ctx("my card was charged twice", ())) == (0.0, 0.0, 0.0, 0.0)


def test_without_the_embedding_package_the_features_read_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken or absent WordLlama install: the model sees "not measured", no error."""
    monkeypatch.setattr(dense, "_model", lambda: None)
    dense.embed.cache_clear()
    try:
        assert meaning(ctx("when will the refund arrive?")) == (0.0,) * 4
    finally:
        dense.embed.cache_clear()


def test_the_features_sit_in_the_model_vector_under_their_names() -> None:
    """`extract` carries them, in `FEATURES`' order, as the model file lists them."""
    message = "when will the money for the duplicate charge be back?"
    named = extract(ctx(message)).named()
    got = tuple(named[name] for name in MEANING)
    assert got == meaning(ctx(message))
    first = FEATURES.index(MEANING[0])
    assert FEATURES[first : first + len(MEANING)] == MEANING  # side by side, in order


def test_a_message_is_embedded_once_for_recall_and_the_topic_check() -> None:
    """Recall's search vector and the topic check's read the same cached vector."""
    message = "is the duplicate charge refunded to the same card I paid with?"
    dense.embed.cache_clear()
    searched = dense.query_vector(message)
    misses = dense.embed.cache_info().misses
    meaning(ctx(message))
    assert dense.embed.cache_info().misses == misses + 2  # the window's two texts only
    assert searched is dense.embed(message)
    assert searched is not None
    with pytest.raises(ValueError, match="read-only"):
        searched[0] = 1.0  # a cached vector cannot be changed under its other readers
