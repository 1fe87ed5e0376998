"""Which recalled exchanges to show: a small learned model over BM25's hits and the nearest.

A search held in memory has two lists: BM25's hits and the exchanges nearest the message
in the sentence embedding (`memory.recall.dense`). Fusing them by reciprocal rank put the
answer in the block for 82 % of train-built TIAGE probes while it was among the two lists
for 94 %. Here each candidate of either list is described by what the search already
knows of it (its BM25 score and rank, the share of the query it matched, its rank among
the nearest, the cosine of the message with each side, and the message's tokens' best
cosines with each side's tokens: "home" meets "live" token by token where the means of
two sentences blur it; whether the message asks about "you" or "me", and whether each side
speaks in the first person) and gradient-boosted trees shipped in the package
(`models/rerank-v1.json`, written by `python -m bench.recall.rerank` from train-built TIAGE
conversations and `bench.recall`'s cases, nothing of TIAGE's dev split) give its chance
of holding what the message asks about. The block shows the candidates given at least
the model's `show_at` chance (at least one, at most `dense.SHOWN`; nothing when BM25
found nothing), the likeliest first. The trainer picks `show_at` so that its probes see,
on average, no more exchanges than the fusion's count (BM25's count, `dense.EXTRA` more
unless the lists agree on the best) showed them: a question the model is sure of gets a
short block, a doubtful one a longer one, at the same tokens on average (grouped CV on
train, answer shown, the same trees at the fusion's count and from their chance: user side
83.8 → 86.0 %, the other speaker's 82.3 → 85.5 %, 10.9 → 10.8 exchanges a probe;
`python -m bench.recall.rerank`).

Scored in numpy, every candidate through every tree at once: about 23 candidates, 50
trees. What the choice adds to a search (`python -m bench.recall.ablation`'s last lines,
p50): about 0.1 ms on a support case, 0.4 ms on a TIAGE chat, most of it the token
cosines (`Vectors.measures`: some 20 numpy calls on small arrays), then the feature rows;
the trees, read by a byte table, about 0.03 ms.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from memory.recall.dense import Vectors, token_ids
from memory.recall.port import RecallQuery
from memory.recall.rank import Candidate, Hit
from memory.trees import Node, as_list, read_node, walks

MODEL_FILE = "rerank-v1.json"
RERANK = True  # off: the two lists fused by reciprocal rank (`dense.fuse`), as before
_WORD = re.compile(r"[a-z']+")  # the message's words, for "you" and "me"
_YOU = frozenset({"you", "your", "yours", "yourself"})
_ME = frozenset({"i", "my", "me", "mine", "myself"})
# The columns, in the order `features` builds them: what the search knows of a candidate
# (BM25's score ÷ the best, its rank, the query's share it matched; its rank among the
# nearest; whether each side speaks in the first person), how near each side is
# (`dense.MEASURES`), those below the best candidate's, and what the message asks about
# ("you", "me") times the side it would be answered by.
FEATURES = (
    "bm25", "bm25_share", "bm25_rank", "matched_share", "nearest", "nearest_rank",
    "user_first_person", "reply_first_person",
    "cos_user", "cos_reply", "tokens_user", "tokens_reply", "top_user", "top_reply",
    "cos_user_gap", "cos_reply_gap", "tokens_user_gap", "tokens_reply_gap",
    "asks_you_cos_reply", "asks_me_cos_user", "asks_you_cos_user",
    "asks_you_reply_first_person", "asks_me_user_first_person",
    "asks_you_tokens_reply", "asks_me_tokens_user",
)  # fmt: skip
# the columns (of the first 14) that "asks_you" and "asks_me" multiply, in that order
_ASKED = (9, 8, 8, 7, 6, 11, 10)
MAX_DEPTH = 3  # a tree's splits are then at most 7: their bits fit a byte (`Reranker`)


class RerankFileError(ValueError):
    """The shipped re-ranking model is malformed or was trained on other features."""


class Reranker:
    """Gradient-boosted trees: a candidate's logit is `base` plus each tree's leaf; a row
    goes left where its value is at or under the split's threshold (scikit-learn's rule).
    Each tree is laid out as a complete tree of `depth` levels (at most `MAX_DEPTH`), its
    splits in heap order (a leaf above the last level splits on +inf: every row goes left,
    to copies of it). Scoring compares every row with every split at once; a tree's
    comparisons, as bits, are one byte, and a table gives the leaf each byte ends in: all
    candidates through all trees in about 7 array operations."""

    __slots__ = ("_features", "_offsets", "_table", "_thresholds", "base", "cut", "depth",
                 "features", "show_at", "trees", "version")  # fmt: skip

    def __init__(
        self,
        version: str,
        features: Sequence[str],
        base: float,
        trees: Sequence[Sequence[Node]],
        show_at: float = 0.0,
    ) -> None:
        import numpy as np

        self.version, self.features, self.base = version, tuple(features), base
        if not 0.0 <= show_at < 1.0:
            raise RerankFileError(f"rerank model {version}: show_at {show_at} is not a chance")
        # a candidate is shown from this chance on (`choose`); as a logit, for the scores
        self.show_at = show_at
        self.cut = cut_of(show_at)
        self.trees = tuple(tuple(t) for t in trees)
        if not self.trees or not all(t and walks(t, len(self.features)) for t in self.trees):
            raise RerankFileError(f"rerank model {version}: a tree does not fit its features")
        self.depth = max(1, *(_depth(t) for t in self.trees))
        if self.depth > MAX_DEPTH:
            raise RerankFileError(
                f"rerank model {version}: trees {self.depth} deep, at most {MAX_DEPTH} are read"
            )
        count, splits = len(self.trees), 2**self.depth - 1
        # each tree's splits in heap order, in a byte's 8 places (the unused ones split on
        # +inf: every row goes left, a bit the table ignores)
        features_at, thresholds = np.zeros((count, 8), np.intp), np.full((count, 8), np.inf)
        leaves = np.zeros((count, 2**self.depth))
        for n, nodes in enumerate(self.trees):
            _lay(nodes, 0, self.depth, (features_at[n], thresholds[n], leaves[n]))
        # each tree's leaf for every pattern of its splits' bits (bit h set: the row goes
        # right at the split in heap place h), the trees one after another
        table = np.zeros((count, 256))
        for code in range(2 ** (splits + 1)):
            place = 0
            for level in range(self.depth):
                place = 2 * place + (code >> (2**level - 1 + place) & 1)
            table[:, code] = leaves[:, place]
        self._features, self._thresholds = features_at.ravel(), thresholds.ravel()
        self._table, self._offsets = table.ravel(), np.arange(count) * 256

    def logits(self, rows: Any) -> Any:
        """Each row's logit (`rows`: candidates × `features`)."""
        import numpy as np

        rows = np.asarray(rows, np.float64)
        right = rows.take(self._features, axis=1) > self._thresholds  # every row, every split
        codes = np.packbits(right, axis=1, bitorder="little")  # (rows, trees): a byte each
        return self.base + self._table.take(codes + self._offsets).sum(axis=1)


def _lay(nodes: Sequence[Node], at: int, depth: int, into: tuple[Any, Any, Any],
         level: int = 0, place: int = 0) -> None:  # fmt: skip
    """Node `at` of a tree and those under it into the tree's rows `into` (its splits'
    features and thresholds in heap order, its leaves), at `level` and `place` of a
    complete tree `depth` deep."""
    f, threshold, left, right, value = nodes[at]
    features, thresholds, leaves = into
    if level == depth:
        leaves[place] = value
        return
    if f < 0:  # a leaf above the last level: every row goes left, to copies of it
        _lay(nodes, at, depth, into, level + 1, 2 * place)
        _lay(nodes, at, depth, into, level + 1, 2 * place + 1)
        return
    heap = 2**level - 1 + place
    features[heap], thresholds[heap] = f, threshold
    _lay(nodes, left, depth, into, level + 1, 2 * place)
    _lay(nodes, right, depth, into, level + 1, 2 * place + 1)


def _depth(nodes: Sequence[Node], at: int = 0) -> int:
    f, _, left, right, _ = nodes[at]
    return 0 if f < 0 else 1 + max(_depth(nodes, left), _depth(nodes, right))


def parse(raw: Mapping[str, object]) -> Reranker:
    """The model from its JSON document, or RerankFileError saying what is wrong."""
    try:
        version = str(raw["version"])
        names = tuple(str(n) for n in as_list(raw["features"]))
        trees = [[read_node(n) for n in as_list(t)] for t in as_list(raw["trees"])]
        base = float(str(raw["base"]))
        show_at = float(str(raw["show_at"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise RerankFileError(f"rerank model file is malformed: {exc!r}") from exc
    if names != FEATURES:
        raise RerankFileError(
            f"rerank model {version} was trained on other features: retrain it with "
            "`python -m bench.recall.rerank`"
        )
    return Reranker(version, names, base, trees, show_at)


@cache
def load(name: str = MODEL_FILE) -> Reranker:
    """The packaged model, read and checked once per process."""
    folder = resources.files("memory.recall").joinpath("models")
    return parse(json.loads(folder.joinpath(name).read_text(encoding="utf-8")))


def features(
    hits: Sequence[Hit],
    nearest: Sequence[tuple[int, bool]],
    vectors: Vectors,
    query: RecallQuery,
) -> tuple[list[int], Any]:
    """The candidates (BM25's hits, then the nearest the hits do not hold) by id, and
    their rows of `FEATURES`."""
    import numpy as np

    ids = [h.exchange.id for h in hits]
    have = set(ids)
    ids += [i for i, _ in nearest if i not in have]
    rows = np.zeros((len(ids), len(FEATURES)))
    if not ids:
        return ids, rows
    found = len(hits)  # BM25's columns: zeros for a candidate only the embedding found
    if found:
        rows[:found, 0] = 1.0
        rows[:found, 1] = [h.score for h in hits]
        rows[:found, 1] /= hits[0].score
        rows[:found, 2] = 1.0 / np.arange(1, found + 1)
        rows[:found, 3] = [len(h.matched) for h in hits]
        rows[:found, 3] /= max(len(query.terms), 1)
    near_rank = {i: 1.0 / (1 + r) for r, (i, _) in enumerate(nearest)}
    rows[:, 5] = [near_rank.get(i, 0.0) for i in ids]
    rows[:, 4] = rows[:, 5] > 0.0
    near = vectors.measures(ids, query.vector, token_ids(query.text))
    rows[:, 6:14] = near
    rows[:, 14:18] = near[:, 2:6] - np.maximum.reduce(near[:, 2:6])  # below the best's
    words = _WORD.findall(query.text.lower())
    you, me = float(not _YOU.isdisjoint(words)), float(not _ME.isdisjoint(words))
    rows[:, 18:] = rows[:, _ASKED] * np.array((you, me, you, you, me, you, me))
    return ids, rows


def cut_of(show_at: float) -> float:
    """The logit of the chance `show_at` (-inf for 0: every candidate reaches it)."""
    return math.log(show_at / (1.0 - show_at)) if show_at else -math.inf


def shown(logits: Any, cut: float, limit: int) -> int:
    """How many candidates to show: those whose logit is at least `cut`, at least one,
    at most `limit`."""
    import numpy as np

    return min(max(int(np.count_nonzero(logits >= cut)), 1), limit)


def choose(
    hits: Sequence[Hit],
    nearest: Sequence[tuple[int, bool]],
    entries: Mapping[int, Candidate],
    vectors: Vectors,
    query: RecallQuery,
    limit: int,
    model: Reranker | None = None,
) -> list[Hit]:
    """The hits to show, likeliest first, chosen by the model among BM25's `hits` and the
    `nearest` (id, whether its reply made it near): those it gives at least `show_at`
    chance, at least one and at most `limit`; none when BM25 found nothing. An exchange
    only the embedding found comes with no matched term, marked `near_reply` when its
    reply made it near."""
    if not hits:
        return []
    import numpy as np

    model = model or load()
    ids, rows = features(hits, nearest, vectors, query)
    logits = model.logits(rows)
    order = np.argsort(-logits, kind="stable")[: shown(logits, model.cut, limit)]
    by_id = {h.exchange.id: h for h in hits}
    by_reply = {i for i, reply in nearest if reply}
    out = []
    for at in order.tolist():
        i = ids[at]
        found = by_id.get(i)
        out.append(found or Hit(entries[i].exchange, 0.0, (), near_reply=i in by_reply))
    return out
