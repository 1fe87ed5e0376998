"""The opening model (`memory.topic.opening`): its terms, its file, its fit, its feature."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.topic_model.opening import as_json, fit_opening
from memory.topic.context import TopicContext
from memory.topic.features import FEATURES, extract
from memory.topic.opening import (
    OpeningModel,
    load_opening,
    opening_logit,
    opening_terms,
    parse_opening,
)
from memory.types import Exchange

NOW = datetime(2026, 3, 2, 9, tzinfo=UTC)


def test_terms_are_folded_words_numbers_pairs_and_first_words() -> None:
    got = opening_terms("Hola, el pedido 4821 NO llegó")
    assert {"hola", "el", "pedido", "#", "no", "llego"} <= got
    assert {"pedido_#", "no_llego"} <= got
    assert {"^hola", "^el", "^pedido"} <= got
    assert "^no" not in got  # only the first three words mark the start
    assert "4821" not in got  # every number is `#`: a ticket number is no topic


def test_the_shipped_model_loads_and_reads_an_opening_above_a_follow_up() -> None:
    model = load_opening()
    assert model.version == "opening-v2"
    assert model.weights  # trained, not the empty placeholder
    opening = "Hola, quería saber por qué me habéis cobrado dos veces la cuota de marzo"
    assert opening_logit(opening) > opening_logit("ok, gracias, ya lo veo")
    assert opening_logit("Hi, I ordered a desk last week and it arrived broken") > (
        opening_logit("yes, done, it works now")
    )


def test_fit_separates_a_toy_set_and_a_file_round_trips() -> None:
    texts = ["hola tengo un problema con mi factura", "hola quiero cambiar mi tarifa"] * 3
    texts += ["ok gracias", "vale ya esta", "si funciona"] * 2
    opens = [True] * 6 + [False] * 6
    model = fit_opening(texts, opens)
    assert model.logit("hola tengo un problema") > 0 > model.logit("ok gracias")
    again = parse_opening(as_json(model, "toy"))
    assert again == model


def test_one_class_gives_a_constant_model() -> None:
    model = fit_opening(["ok", "vale"], [False, False])
    assert model == OpeningModel("opening-v2", {}, 0.0)


def test_the_feature_is_a_column_and_takes_another_model() -> None:
    at = FEATURES.index("opening")
    ctx = TopicContext(
        message="hola, otra cosa",
        window=(Exchange(1, 1, "el router no va", "¿Lo ha reiniciado?", signal=True),),
        summary="",
        now=NOW,
        last_activity=NOW,
        idle_reset_hours=0,
        summary_rounds=0,
        language="es",
    )
    assert extract(ctx).values[at] == opening_logit("hola, otra cosa")
    other = OpeningModel("x", {"hola": 2.0, "otra_cosa": 1.5}, -1.0)
    assert extract(ctx, other).values[at] == 2.5
    named = extract(ctx, other).named()
    assert named["opening_novel"] == 2.5 * named["novelty"]


def test_the_logit_does_not_depend_on_the_order_of_the_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The terms are a set, iterated in an order the hash seed picks per process: the sum
    is exact, so every process reads the same value (a boosted head splits on it)."""
    import memory.topic.opening as opening

    model = OpeningModel("t", {"a": 1e16, "b": 1.0, "c": -1e16}, 0.0)
    for order in (("a", "b", "c"), ("a", "c", "b"), ("b", "c", "a")):
        monkeypatch.setattr(opening, "opening_terms", lambda _text, o=order: o)
        assert model.logit("any text") == 1.0
