"""A question that shares no word with the exchange that answers it: the sentence
embedding beside BM25 (`memory.recall.dense`: the package's vectors read offline, a
fusion that never recalls more than BM25 did, the search in memory finding an exchange
sharing no word) and the learned choice among both lists (`memory.recall.rerank`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory import trees
from memory.recall import dense, rerank
from memory.recall.block import piece
from memory.recall.hot import Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import Candidate, Hit
from memory.recall.related import search_terms
from memory.recall.terms import terms
from memory.types import Exchange

T0 = datetime(2026, 3, 2, tzinfo=UTC)
SAID = (
    "i love to watch a home run at the baseball game",
    "my home page has a blog about cooking pasta",
    "i got home late from the office again",
    "i live in a small town in california",
    "pizza with pineapple is my favourite food",
    "i play the guitar every evening after work",
)
FILLER = tuple(f"the weather was sunny and warm on day {n}" for n in range(30))


def exchange(exchange_id: int, text: str) -> Exchange:
    return Exchange(exchange_id, 1, text, "nice", True, None, T0)


def key_of(texts: tuple[str, ...]) -> KeyIndex:
    index = KeyIndex(1, 1)
    for n, text in enumerate(texts, start=1):
        index.add(Indexed(exchange(n, text), tuple(terms(f"{text}\nnice"))))
    return index


def hit(exchange_id: int) -> Hit:
    return Hit(exchange(exchange_id, f"text {exchange_id}"), 1.0, ("text",))


def test_the_package_vectors_load_offline_and_place_near_meanings_near() -> None:
    """The model loads from the package's own files; "dogs" is nearer dogs than pizza."""
    assert dense.available()
    question = dense.embed("how many dogs do i own?")
    near, far = dense.embed("i have two dogs at home"), dense.embed("i like pizza")
    assert question is not None
    assert near is not None
    assert far is not None
    assert question.shape == (dense.DIM,)
    assert abs(float(question @ question) - 1.0) < 1e-5
    assert float(question @ near) > float(question @ far) + 0.3


def test_a_message_of_stop_words_only_has_no_vector() -> None:
    """No content word, no vector: the search is BM25's alone."""
    assert dense.embed("what did you do?") is None
    assert dense.embed("") is None


def test_spanish_words_get_vectors_too() -> None:
    """A Spanish question is nearer the Spanish exchange that answers it."""
    question = dense.embed("¿dónde vivo?")
    near, far = dense.embed("vivo en un pueblo pequeño"), dense.embed("me gusta la pizza")
    assert question is not None
    assert near is not None
    assert far is not None
    assert float(question @ near) > float(question @ far) + 0.3


def test_a_message_of_words_the_vocabulary_splits_is_not_searched_by_meaning() -> None:
    """Spanish words cut into pieces give no query vector; English words do."""
    assert dense.query_vector("¿me mandáis la factura rectificativa?") is None
    assert dense.embed("¿me mandáis la factura rectificativa?") is not None
    english = dense.query_vector("how many dogs do i own?")
    assert english is not None
    assert english.shape == (dense.DIM,)


def test_fusion_adds_extra_places_only_when_the_lists_disagree_on_the_best() -> None:
    """Twenty nearest exchanges lengthen a two-hit search by `EXTRA` when BM25's best is
    not the nearest, not at all when it is, nor a search with no hit."""
    entries = {i: Candidate(exchange(i, f"text {i}"), ("text",)) for i in range(1, 30)}
    nearest = list(range(29, 9, -1))
    fused = dense.fuse([hit(1), hit(2)], nearest, entries)
    assert (dense.EXTRA, dense.AGREE) == (3, 1)
    assert [h.exchange.id for h in fused] == [1, 29, 2, 28, 27]
    assert [h.exchange.id for h in fused if h.matched == ()] == [29, 28, 27]
    agreed = dense.fuse([hit(1), hit(2)], [1, *nearest], entries)
    assert [h.exchange.id for h in agreed] == [1, 2]
    assert dense.fuse([], nearest, entries) == []
    many = [hit(i) for i in range(1, 21)]
    assert len(dense.fuse(many, nearest, entries)) == dense.SHOWN


def test_fusion_ranks_what_both_lists_hold_first_and_brings_in_the_nearest() -> None:
    """An exchange in both lists leads; one only the embedding found enters, unmatched."""
    entries = {i: Candidate(exchange(i, f"text {i}"), ("text",)) for i in range(1, 10)}
    fused = dense.fuse([hit(1), hit(2), hit(3)], [9, 3], entries, limit=3)
    assert [h.exchange.id for h in fused] == [3, 1, 9]
    assert fused[2].matched == ()
    assert fused[2].score == 0.0
    assert fused[0] is not None
    assert fused[0].matched == ("text",)


def test_nearest_skips_the_exchanges_at_or_after_the_bound() -> None:
    """The window's exchanges (id >= before) are never among the nearest."""
    vectors = dense.Vectors()
    for n, text in enumerate(SAID, start=1):
        vectors.add(n, text)
    question = dense.embed("where do i live?")
    assert len(vectors) == len(SAID)
    assert vectors.nearest(question, before=4)
    assert 4 not in vectors.nearest(question, before=4)
    assert vectors.nearest(question, before=1) == []
    assert vectors.nearest(question, before=None, top=1) == [4]


def test_the_search_in_memory_recalls_an_exchange_sharing_no_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "where is my home?" finds "i live in a small village" only with the message's vector."""
    monkeypatch.setattr(dense, "DENSE_TOP", 1)  # the nearest one only, in this small key
    said = (
        "the home team lost the football match on sunday night",
        "i love to watch a home run at the baseball game with friends and a hot dog",
        "i live in a small village",
    )
    index = key_of(said + FILLER)
    question = "where is my home?"
    plain = RecallQuery(1, 1, search_terms(question), None, 5)
    fused = RecallQuery(1, 1, search_terms(question), None, 5, None, dense.embed(question))
    without = [h.exchange.id for h in index.search(plain)]
    with_vector = [h.exchange.id for h in index.search(fused)]
    assert sorted(without) == [1, 2]
    assert with_vector == [without[0], 3, without[1]]  # the two disagree: a place more


def test_without_the_package_recall_is_bm25_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model: no vector for the message or the exchanges, the same hits as before."""
    question = "where is my home?"
    expected = [
        h.exchange.id
        for h in key_of(SAID).search(RecallQuery(1, 1, search_terms(question), None, 3))
    ]
    monkeypatch.setattr(dense, "_model", lambda: None)
    dense.embed.cache_clear()  # vectors cached by text while the model was there
    try:
        index = key_of(SAID)
        assert dense.embed(question) is None
        assert len(index.vectors) == 0
        query = RecallQuery(1, 1, search_terms(question), None, 3, None, dense.embed(question))
        assert [h.exchange.id for h in index.search(query)] == expected
    finally:
        dense.embed.cache_clear()  # no None cached for the tests after this one


def test_an_exchange_is_near_by_its_reply_too_and_shows_that_side() -> None:
    """ "where is your home?" finds the bot's "i live in a small village" under a user
    side about something else; the block shows that reply and cuts the user side."""
    vectors = dense.Vectors()
    vectors.add(1, "the weather was sunny and warm", "nice")
    vectors.add(2, "and you, where are you these days?", "i live in a small village")
    vectors.add(3, "i live in a small village", "nice")
    question = dense.embed("where is your home?")
    sides = dict(vectors.nearest_sides(question, before=None))
    assert sides[2] is True  # near by its reply
    assert sides[3] is False  # the same words said by the user: its user side leads
    assert next(iter(sides)) == 3  # a reply counts `REPLY_MARGIN` less than a user side
    near = Hit(Exchange(2, 1, "and you, where are you these days?", "i live in a small village",
                        True, None, T0), 0.0, (), near_reply=True)  # fmt: skip
    shown = piece(near, "en")
    assert "i live in a small village" in shown
    assert "where are you these days" not in shown
    entries = {2: Candidate(near.exchange, ())}
    [fused] = dense.fuse([hit(9)], [2], entries | {9: Candidate(hit(9).exchange, ())},
                         limit=3, by_reply=frozenset({2}))[1:]  # fmt: skip
    assert fused.near_reply


# -- the learned choice (`memory.recall.rerank`) ------------------------------------------


def stub(feature: str = "nearest_rank", show_at: float = 0.0) -> rerank.Reranker:
    """One tree: a candidate whose `feature` is over 0.5 is likelier (logit 1, a chance of
    0.73; the others -1, 0.27: the nearest one by default), shown from `show_at` on."""
    split = (rerank.FEATURES.index(feature), 0.5, 1, 2, 0.0)
    return rerank.Reranker("stub", rerank.FEATURES, 0.0, [[split, (-1, 0.0, 0, 0, -1.0),
                           (-1, 0.0, 0, 0, 1.0)]], show_at)  # fmt: skip


def test_the_shipped_model_loads_and_scores_as_its_trees_say() -> None:
    """The packaged file reads the features the search computes, and the array walk gives
    every row what a node-by-node walk of each tree gives."""
    np = pytest.importorskip("numpy")
    model = rerank.load()
    assert model.version == "rerank-v1"
    assert model.features == rerank.FEATURES
    assert len(model.trees) >= 50
    assert model.depth == 3
    assert 0.0 < model.show_at < 0.05  # picked by the trainer, read from the file
    rows = np.random.default_rng(7).uniform(-1.0, 1.5, (40, len(rerank.FEATURES)))
    rows[:5] = np.round(rows[:5])  # values on the thresholds' side of 0 and 1 too
    expected = [trees.logit(model.base, model.trees, list(row)) for row in rows]
    assert model.logits(rows) == pytest.approx(expected, abs=1e-9)


def _chain(depth: int, feature: int = 0) -> list[trees.Node]:
    """A tree `depth` splits deep down its right side, a leaf of its own value left of
    each split and at the bottom (uneven: the byte table must copy the early leaves)."""
    nodes: list[trees.Node] = []
    for level in range(depth):
        at = len(nodes)
        split: trees.Node = (feature + level, 0.1 * level, at + 1, at + 2, 0.0)
        nodes += [split, (-1, 0, 0, 0, -level - 1.0)]
    return [*nodes, (-1, 0, 0, 0, 10.0)]


def test_trees_of_every_depth_up_to_three_score_as_walked_and_deeper_ones_are_refused() -> None:
    """A leaf alone, one, two and three splits deep, uneven, in one model: each row's logit
    is the node-by-node walk's (the table lookup reads the same leaf); a tree four deep
    does not fit a byte's table and is refused, saying so."""
    np = pytest.importorskip("numpy")
    forest = [[(-1, 0, 0, 0, 0.5)], _chain(1, 3), _chain(2, 5), _chain(3, 7), _chain(3, 0)]
    model = rerank.Reranker("mixed", rerank.FEATURES, 0.25, forest)
    assert model.depth == rerank.MAX_DEPTH == 3
    rows = np.random.default_rng(11).uniform(-0.2, 0.5, (60, len(rerank.FEATURES)))
    rows[:10] = np.round(rows[:10], 1)  # on the thresholds too (0.0, 0.1, 0.2: go left)
    expected = [trees.logit(0.25, forest, list(row)) for row in rows]
    assert model.logits(rows) == pytest.approx(expected, abs=1e-12)
    assert len(set(np.round(model.logits(rows), 6))) > 4  # the rows do reach many leaves
    with pytest.raises(rerank.RerankFileError, match="4 deep, at most 3"):
        rerank.Reranker("deep", rerank.FEATURES, 0.0, [_chain(4)])


def test_a_model_file_for_other_features_or_with_a_loop_is_refused() -> None:
    """Another feature list, a split pointing back up its tree, or a missing field: a
    `RerankFileError` saying so, never a model that would score the wrong columns."""
    good = {"version": "x", "features": list(rerank.FEATURES), "base": 0.0, "show_at": 0.1,
            "trees": [[[0, 0.5, 1, 2, 0.0], [-1, 0, 0, 0, -1.0], [-1, 0, 0, 0, 1.0]]]}  # fmt: skip
    assert rerank.parse(good).logits([[1.0] * len(rerank.FEATURES)])[0] == 1.0
    with pytest.raises(rerank.RerankFileError, match="other features"):
        rerank.parse(good | {"features": list(rerank.FEATURES[::-1])})
    with pytest.raises(rerank.RerankFileError, match="does not fit"):
        rerank.parse(good | {"trees": [[[0, 0.5, 0, 2, 0.0], [-1, 0, 0, 0, 0.0],
                                        [-1, 0, 0, 0, 0.0]]]})  # fmt: skip
    with pytest.raises(rerank.RerankFileError, match="malformed"):
        rerank.parse({k: v for k, v in good.items() if k != "base"})


def test_the_choice_follows_the_model_and_shows_those_it_gives_a_chance() -> None:
    """BM25's two hits and twenty nearest: the model's likeliest lead, and the candidates
    shown are those it gives at least the model's `show_at` chance, one at least and
    `limit` at most; nothing without a BM25 hit."""
    index = key_of(tuple(f"the weather was sunny on day {n}" for n in range(1, 30)))
    vectors, entries = index.vectors, index.entries
    nearest = [(i, False) for i in range(29, 9, -1)]
    query = RecallQuery(1, 1, search_terms("sunny weather?"), None, 20, None,
                        dense.embed("sunny weather?"), "sunny weather?")  # fmt: skip
    hits = [Hit(entries[i].exchange, 2.0, ("sunni",)) for i in (1, 2)]
    every = rerank.choose(hits, nearest, entries, vectors, query, 13, stub(show_at=0.2))
    assert len(every) == 13  # all 22 candidates reach 0.27: `limit` of them
    assert every[0].exchange.id == 29  # the nearest, which only the model favours
    assert every[0].matched == ()
    assert every[0].score == 0.0
    assert [h.exchange.id for h in every[1:3]] == [1, 2]  # then the pool's own order
    assert len(rerank.choose(hits, nearest, entries, vectors, query, 5, stub(show_at=0.2))) == 5
    sure = rerank.choose(hits, nearest, entries, vectors, query, 13, stub(show_at=0.5))
    assert [h.exchange.id for h in sure] == [29]  # only the nearest reaches 0.5
    unsure = rerank.choose(hits, nearest[5:], entries, vectors, query, 13, stub(show_at=0.9))
    assert [h.exchange.id for h in unsure] == [24]  # none reaches 0.9: the likeliest alone
    assert rerank.choose([], nearest, entries, vectors, query, 13, stub()) == []
    by_reply = rerank.choose(hits, [(29, True)], entries, vectors, query, 13, stub())
    assert [h.exchange.id for h in by_reply] == [29, 1, 2]
    assert by_reply[0].near_reply
    with pytest.raises(rerank.RerankFileError, match="not a chance"):
        stub(show_at=1.0)


def test_the_search_in_memory_asks_the_shipped_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search with a vector goes through `rerank.choose` with the message's text (its
    "you" and "me" are features); `RERANK` off, the fusion decides as before."""
    seen: list[str] = []
    model = stub("cos_user")

    def spy(*args: object, **kwargs: object) -> list[Hit]:
        seen.append(args[4].text)  # type: ignore[attr-defined]
        return rerank_choose(*args, model=model)  # type: ignore[arg-type]

    rerank_choose = rerank.choose
    monkeypatch.setattr(rerank, "choose", spy)
    index = key_of(SAID + FILLER)
    question = "where do i live?"
    query = RecallQuery(1, 1, search_terms(question), None, 5, None, dense.embed(question),
                        question)  # fmt: skip
    assert index.search(query)[0].exchange.id == 4
    assert seen == [question]
    monkeypatch.setattr(rerank, "RERANK", False)
    index.search(query)
    assert seen == [question]


def test_token_measures_are_each_side_best_token_cosines() -> None:
    """`Vectors.measures`: per exchange whether each side speaks in the first person, the
    cosines of the message with each side, then over the message's tokens the mean and
    the largest best match in each side; a side without a content word (an empty reply,
    the last one too) measures 0."""
    np = pytest.importorskip("numpy")
    vectors = dense.Vectors()
    vectors.add(1, "i live in a small village", "nice to hear")
    vectors.add(2, "the weather was sunny", "")
    vectors.add(3, "my dog barks at night", "")
    question = "where is my home?"
    measured = vectors.measures([3, 1], dense.embed(question), dense.token_ids(question))
    assert measured.shape == (2, len(dense.MEASURES))
    units = dense._units()
    asked = units[list(dense.token_ids(question))]
    sides = (("my dog barks at night", ""), ("i live in a small village", "nice to hear"))
    for row, (user, reply) in zip(measured, sides, strict=True):
        for n, side in enumerate((user, reply)):
            assert row[n] == float(dense.first_person(side))
            ids = list(dense.token_ids(side))
            if not ids:
                assert row[2 + n] == row[4 + n] == row[6 + n] == 0.0
                continue
            best = (asked @ units[ids].T).max(axis=1)
            assert row[4 + n] == pytest.approx(float(best.mean()), abs=1e-5)
            assert row[6 + n] == pytest.approx(float(best.max()), abs=1e-5)
            assert row[2 + n] == pytest.approx(float(dense.embed(side) @ dense.embed(question)),
                                               abs=1e-5)  # fmt: skip
    assert np.all(vectors.measures([], dense.embed(question), ()) == 0)


def test_first_person_is_a_speaker_speaking_of_themselves() -> None:
    """ "i", "my", "i'm" make a side first-person; "you", or an "i" inside a word, does not."""
    assert dense.first_person("I'm a nurse")
    assert dense.first_person("my dog barks")
    assert not dense.first_person("you live in a small town, imagine")


def test_each_feature_column_holds_what_its_name_says() -> None:
    """A BM25 hit that is also the nearest, and one only the embedding found, asked about
    "your" home: each named column holds its own value (the model reads them by place)."""
    index = key_of(("my home page has a blog", "where are you from?"))
    index.add(Indexed(Exchange(3, 1, "and you?", "i live in a small village", True, None, T0),
                      tuple(terms("and you?\ni live in a small village"))))  # fmt: skip
    question = "where is your home?"
    query = RecallQuery(1, 1, search_terms(question), None, 5, None, dense.embed(question),
                        question)  # fmt: skip
    hit = Hit(index.entries[1].exchange, 2.0, ("home",))
    ids, rows = rerank.features([hit], [(3, True), (1, False)], index.vectors, query)
    assert ids == [1, 3]
    col = {name: rows[:, n] for n, name in enumerate(rerank.FEATURES)}
    assert list(col["bm25"]) == [1.0, 0.0]
    assert list(col["bm25_share"]) == [1.0, 0.0]
    assert col["matched_share"][0] == pytest.approx(1 / len(query.terms))
    assert list(col["nearest"]) == [1.0, 1.0]
    assert list(col["nearest_rank"]) == [0.5, 1.0]
    assert list(col["user_first_person"]) == [1.0, 0.0]
    assert list(col["reply_first_person"]) == [0.0, 1.0]
    measured = index.vectors.measures(ids, query.vector, dense.token_ids(question))
    for n, name in enumerate(dense.MEASURES):
        assert list(col[name]) == pytest.approx(list(measured[:, n]))
    assert col["cos_reply_gap"].max() == 0.0
    assert list(col["asks_you_cos_reply"]) == pytest.approx(list(col["cos_reply"]))
    assert list(col["asks_you_reply_first_person"]) == [0.0, 1.0]
    assert not col["asks_me_cos_user"].any()
    assert not col["asks_me_tokens_user"].any()
