"""A sentence embedding beside BM25: recalled exchanges the question shares no word with.

"where is my home?" shares no term with "i live in cali"; related words (`related`)
bridge only the nearest words. Each exchange held in memory (`memory.recall.hot`) also
keeps a vector of its user side and one of its reply: the mean of a side's content
words' token vectors in a static embedding that ships inside an installed package
(WordLlama `l2_supercat`, MIT; its first `DIM` dimensions, read from the package's own
files, nothing downloaded), unit length, and the ids of each side's content tokens
(`Vectors.measures` compares a message with them token by token). A search then has two
lists: BM25's hits and the `DENSE_TOP` exchanges nearest the message, each as near as its
nearer side. `memory.recall.rerank` chooses among them with a learned model, showing those
it gives a chance (at most `SHOWN`); `fuse`, the reciprocal-rank fusion it replaced, stays
as its baseline arm (`rerank.RERANK` off), cut to BM25's own number of hits (plus `EXTRA`
when the two lists disagree on the best) and to `SHOWN`. Either way a message that
recalls nothing still recalls nothing; one only the embedding found is shown with the
side that made it near, the other cut (`memory.recall.block`: the cut pays for the
extra places). A message mostly of words the vocabulary cuts into pieces
(Spanish, mostly) is not searched by meaning (`query_vector`).

The constants were fitted on TIAGE train-built conversations and `bench.recall`'s support
cases only (`bench.recall.ablation`'s rows, block only, 522 train probes); the dev split
was scored once for them (docs/benchmarks.md, 2026-12-06). Without the package, or without a
vector (a message of function words only), recall is BM25 alone; so is a search not held
in memory (SQLite's on disk, PostgreSQL's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from memory.caches import WINDOW_TEXTS
from memory.recall.rank import Candidate, Hit
from memory.text.stopwords import RECALL_STOP_WORDS

if TYPE_CHECKING:
    import numpy as np

log = structlog.get_logger(__name__)

# Train, answer in the block (BM25 + related words alone: 81.4 %, 557 tokens):
DIM = 64  # of the model's 256: the same answers (83.0 vs 83.1 %), a quarter the cost
DENSE_TOP = 20  # nearest exchanges fused: 83.0 % (10: 81.6 %, 40: 82.6 %)
DENSE_WEIGHT = 1.0  # the nearest list's weight (0.5: 81.0 %; 2.0: 83.3 %, a support probe lost)
RRF_K = 60  # reciprocal rank's constant (10 gave the same answers)
SHOWN = 13  # hits a fused search returns at most: 466 tokens (10: 80.5 %; 16 / 20: 83.1 %)
# Places past BM25's own count the fused list may take, unless the two agree (BM25's best
# hit is among the `AGREE` nearest): recall10. Train's misses were 92 % an answer sharing
# no term with the question (82 of 89); the embedding held a fifth of those in its
# nearest 20, behind BM25's count. Train, block only (replies of near exchanges cut):
# 83.0 % at 447 tokens → 84.5 % at 466 (extra places always: 85.1 % at 479, and a
# routine support turn's block 87 → 111 tokens, 91 with agreement; AGREE 3: 84.3 %;
# EXTRA 1 / 2 / 5 always: 83.5 / 84.1 / 85.4 %). `bench.recall`'s cases 70.8 % throughout.
EXTRA = 3
AGREE = 1
# An exchange's reply has a vector too (recall11): a question about what the bot said
# ("where is your home?" against its "i live in north carolina") had only BM25 before.
# Train, block only, user-side / bot-side probes (522 / 183): user sides only 84.5 /
# 72.1 %; both sides, a reply counting this much less in cosine: 0 → 80.8 / 80.9, 0.05 →
# 81.4 / 79.8, 0.1 → 82.0 / 79.8, 0.2 → 83.1 / 77.0 %; a second nearest list of replies
# at half weight 83.0 / 72.7; one vector of both sides 80.5 / 77.6. Kept: 0.1, the best
# mean of the two kinds (long-conversation QA asks about both speakers alike).
REPLY_MARGIN = 0.1
# a message searched by meaning: half its content words whole in the vocabulary (English
# support messages: 99 % do; TIAGE's: 90 %; Spanish support messages: 18 %). Train the
# same at 0.5 and 0.6; `bench.tokens`' Spanish case back to BM25 alone (+0.6 % tokens without)
WHOLE_SHARE = 0.5
_WORD = re.compile(r"\w+")
# `Vectors.measures`' columns: whether each side of an exchange speaks in the first person,
# the message's cosine with its user side and reply, the mean of the message's tokens'
# best cosines with each side's tokens, and the largest of them
MEASURES = ("user_first_person", "reply_first_person", "cos_user", "cos_reply",
            "tokens_user", "tokens_reply", "top_user", "top_reply")  # fmt: skip
_SPEAKER_WORD = re.compile(r"[a-z']+")
_FIRST_PERSON = frozenset({"i", "my", "me", "mine", "myself", "i'm", "im"})


@cache
def _model() -> tuple[Any, Any] | None:
    """(tokenizer, token vectors) from the installed WordLlama package, or None."""
    try:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError as exc:
        log.warning("recall_dense_unavailable", error=str(exc))
        return None
    # the package's files only: importing it would configure the root logger
    spec = find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        log.warning("recall_dense_unavailable", error="wordllama is not installed")
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    try:
        # the package's loader would look elsewhere first and try to download
        vocabulary = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
        tokenizer = Tokenizer.from_file(str(vocabulary))
        path = root / "weights" / "l2_supercat_256.safetensors"
        with safe_open(str(path), framework="np", device="cpu") as fh:
            matrix = fh.get_tensor("embedding.weight")[:, :DIM].astype(np.float32)
    except Exception as exc:  # a broken install: BM25 alone
        log.warning("recall_dense_unavailable", error=str(exc))
        return None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, np.ascontiguousarray(matrix)


def available() -> bool:
    return _model() is not None


def content(text: str) -> str:
    """The text's words that are not recall stop words, lowercased, space-separated."""
    return " ".join(_content_words(text))


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in RECALL_STOP_WORDS]


@lru_cache(maxsize=65536)
def _word_ids(word: str) -> tuple[int, ...]:
    """One word's token ids, as the tokenizer splits it inside a text (each word starts
    with its own `▁` piece, so a text's ids are its words' ids in order): a chat's words
    recur, and one call per word seen is a fraction of encoding every message."""
    model = _model()
    return () if model is None else tuple(model[0].encode(word, add_special_tokens=False).ids)


def query_vector(message: str) -> np.ndarray | None:
    """`embed(message)` for a search, unless under `WHOLE_SHARE` of its content words are
    whole words of the vocabulary: Llama 2's holds few Spanish words, and the mean of a
    word's pieces ("factura" → `▁fact ura`) says little of its meaning."""
    words = _content_words(message)
    if _model() is None or not words:
        return None
    whole = sum(len(_word_ids(word)) == 1 for word in words)
    return embed(message) if whole >= WHOLE_SHARE * len(words) else None


@lru_cache(maxsize=WINDOW_TEXTS)
def token_ids(text: str) -> tuple[int, ...]:
    """The distinct token ids of `text`'s content words, in order: what `Vectors.measures`
    compares a message with, token by token (cached by text, as `embed`)."""
    return tuple(dict.fromkeys(i for word in _content_words(text) for i in _word_ids(word)))


def first_person(text: str) -> bool:
    """Whether `text` speaks of its speaker ("i", "my", "i'm")."""
    return not _FIRST_PERSON.isdisjoint(_SPEAKER_WORD.findall(text.lower()))


@cache
def _units() -> Any:
    """The model's token vectors scaled to unit length (for token-to-token cosines)."""
    model = _model()
    if model is None:
        return None
    import numpy as np

    matrix = model[1]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, np.float32(1e-9))


@lru_cache(maxsize=WINDOW_TEXTS)
def embed(text: str) -> np.ndarray | None:
    """The unit mean of `text`'s content-word token vectors; None without the model or
    without a content word. Cached by text, so read-only (writing into it raises): a
    turn's message is embedded once for recall's search, its exchange's vector and the
    topic check (`memory.topic.features.meaning`), and a window's texts recur turn after
    turn."""
    model = _model()
    if model is None:
        return None
    ids = [i for word in _content_words(text) for i in _word_ids(word)]
    if not ids:
        return None
    matrix = model[1]
    vector = matrix.take(ids, axis=0).sum(axis=0)  # the mean's direction, at half its cost
    norm = float((vector @ vector) ** 0.5)
    if not norm:
        return None
    unit: np.ndarray = vector / norm
    unit.flags.writeable = False
    return unit


def fuse(
    hits: Sequence[Hit],
    nearest: Sequence[int],
    entries: Mapping[int, Candidate],
    limit: int = SHOWN,
    by_reply: frozenset[int] = frozenset(),
) -> list[Hit]:
    """BM25's `hits` and the `nearest` exchange ids (best first) by reciprocal rank:
    each list adds weight ÷ (`RRF_K` + its rank); ties keep BM25's order. At most
    `limit` and at most as many as BM25 found, `EXTRA` more unless BM25's best hit is
    among the `AGREE` nearest (the two agree on what the message is about); nothing when
    BM25 found nothing. An exchange only the embedding found comes with no matched term,
    marked `near_reply` when its reply made it near (`by_reply`)."""
    if not hits:
        return []
    scores: dict[int, float] = {}
    for at, hit in enumerate(hits):
        scores[hit.exchange.id] = 1.0 / (RRF_K + at)
    for at, exchange_id in enumerate(nearest):
        scores[exchange_id] = scores.get(exchange_id, 0.0) + DENSE_WEIGHT / (RRF_K + at)
    by_id = {h.exchange.id: h for h in hits}
    order = sorted(scores, key=lambda i: -scores[i])  # stable: BM25's first on ties
    out = []
    agree = hits[0].exchange.id in nearest[:AGREE]
    for exchange_id in order[: min(len(hits) + (0 if agree else EXTRA), limit)]:
        found = by_id.get(exchange_id)
        if found is None:
            near = exchange_id in by_reply
            found = Hit(entries[exchange_id].exchange, 0.0, (), near_reply=near)
        out.append(found)
    return out


class Vectors:
    """One key's vectors, by exchange id (added in id order): each exchange's user side
    and its reply, in two growing arrays; the nearest to a message among those older than
    a bound, in two products. An exchange is as near as its nearer side, a reply counting
    `REPLY_MARGIN` less: a message is more often about what the user said."""

    __slots__ = ("_first", "_ids", "_sides", "_size", "_spans", "_tokens", "_used")

    def __init__(self) -> None:
        self._ids: Any = None
        self._sides: Any = None  # (exchanges, 2, DIM): each one's user side, then its reply
        self._first: Any = None  # (exchanges, 2): each side speaks in the first person
        self._size = 0
        # each exchange's distinct content token ids, user side then reply, one after
        # another in `_tokens`; `_spans[n]` = (user side's start, reply's start, end)
        self._tokens: Any = None
        self._spans: Any = None
        self._used = 0

    def __len__(self) -> int:
        return self._size

    def add(self, exchange_id: int, text: str, reply: str = "") -> None:
        """The vectors of the user side `text` and of `reply` (zeros for a side without a
        content word)."""
        model = _model()
        if model is None:
            return
        import numpy as np

        said, answer = embed(text), embed(reply) if reply else None
        if self._sides is None or self._size == len(self._sides):
            grown = max(16, 2 * self._size)
            sides = np.zeros((grown, 2, DIM), np.float32)
            ids, spans = np.zeros(grown, np.int64), np.zeros((grown, 3), np.int64)
            first = np.zeros((grown, 2), np.float32)
            if self._sides is not None:
                sides[: self._size], ids[: self._size] = self._sides, self._ids
                spans[: self._size], first[: self._size] = self._spans, self._first
            self._sides, self._ids, self._spans, self._first = sides, ids, spans, first
        self._sides[self._size, 0] = 0.0 if said is None else said
        self._sides[self._size, 1] = 0.0 if answer is None else answer
        self._ids[self._size] = exchange_id
        self._first[self._size] = (first_person(text), first_person(reply))
        self._add_tokens(token_ids(text), token_ids(reply) if reply else ())
        self._size += 1

    def _add_tokens(self, said: tuple[int, ...], answer: tuple[int, ...]) -> None:
        import numpy as np

        start, end = self._used, self._used + len(said) + len(answer)
        if self._tokens is None or end > len(self._tokens):
            grown = np.zeros(max(256, 2 * end), np.int32)
            if self._tokens is not None:
                grown[:start] = self._tokens[:start]
            self._tokens = grown
        self._tokens[start:end] = (*said, *answer)
        self._spans[self._size] = (start, start + len(said), end)
        self._used = end

    def nearest(self, vector: Any, before: int | None, top: int | None = None) -> list[int]:
        """The ids of the `top` (`DENSE_TOP`) exchanges older than `before` nearest
        `vector`, best first."""
        return [i for i, _ in self.nearest_sides(vector, before, top)]

    def nearest_sides(
        self, vector: Any, before: int | None, top: int | None = None
    ) -> list[tuple[int, bool]]:
        """`nearest`, each id with whether its reply is the side that made it near."""
        top = DENSE_TOP if top is None else top
        if not self._size or vector is None:
            return []
        import numpy as np

        ids = self._ids[: self._size]
        n = self._size if before is None else int(np.searchsorted(ids, before))
        if n <= 0:
            return []
        both = self._sides[:n] @ vector  # (n, 2)
        said, replied = both[:, 0], both[:, 1] - REPLY_MARGIN
        cos = np.maximum(said, replied)
        if n > top:
            best = np.argpartition(-cos, top)[:top]
            best = best[np.argsort(-cos[best], kind="stable")]
        else:
            best = np.argsort(-cos, kind="stable")
        return [(int(ids[i]), bool(replied[i] > said[i])) for i in best]

    def measures(self, exchange_ids: Sequence[int], vector: Any, query: Sequence[int]) -> Any:
        """For each of `exchange_ids` (held here), whether each side speaks in the first
        person (found when it was added) and how near the message is to its user side and
        to its reply: the cosine of the side's vector with `vector`, then over the
        message's tokens `query` (`token_ids`) the mean and the largest of each one's best
        cosine with a token of the side; as columns `MEASURES`, zeros for a side without a
        content word. The token columns see "home" near "live" where the means blur it."""
        import numpy as np

        out = np.zeros((len(exchange_ids), len(MEASURES)), np.float32)
        if not exchange_ids or not self._size:
            return out
        at = np.searchsorted(self._ids[: self._size], np.asarray(exchange_ids, np.int64))
        out[:, :2] = self._first[at]
        out[:, 2:4] = self._sides[at] @ vector
        units = _units()
        if not query or units is None:
            return out
        spans = self._spans[at]  # (n, 3): user start, reply start, end
        sizes = (spans[:, 1:] - spans[:, :2]).reshape(-1)  # 2n: each user side, each reply
        total = int(sizes.sum())
        if not total:
            return out
        # the sides' tokens one after another, and one more column no side reaches (a
        # trailing empty side's offset points at it, and it never wins a maximum)
        offsets = np.cumsum(sizes) - sizes
        # a token's place in `_tokens`: its place here, moved by its exchange's shift
        shift = (spans[:, 0] - offsets[0::2]).repeat(spans[:, 2] - spans[:, 0])
        picked = self._tokens.take(np.append(np.arange(total) + shift, 0))
        near = units.take(np.asarray(query), axis=0) @ units.take(picked, axis=0).T  # q × all
        near[:, -1] = -np.inf
        best = np.maximum.reduceat(near, offsets, axis=1)  # q × 2n: each side's best match
        best[:, sizes == 0] = 0.0
        out[:, 4:6] = (best.sum(axis=0) / len(query)).reshape(-1, 2)  # each one's two sides
        out[:, 6:8] = best.max(axis=0).reshape(-1, 2)
        return out
