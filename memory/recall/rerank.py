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
of holding what the message asks about. The block shows as many as the fusion would (BM25's
count, `EXTRA` more unless the lists agree on the best, at most `SHOWN`; nothing when BM25
found nothing), the likeliest first.

Scored in numpy, every candidate down every tree at once: about 23 candidates, 50 trees
(about 0.5 ms a search on these 2 cores, most of it numpy calls on small arrays: the
token cosines, the feature rows, the walk; `python -m bench.recall.ablation`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from memory.recall.dense import AGREE, EXTRA, Vectors, token_ids
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
_NONE = (0.0, 0.0, 0.0, 0.0)  # BM25's columns of a candidate only the embedding found


class RerankFileError(ValueError):
    """The shipped re-ranking model is malformed or was trained on other features."""


class Reranker:
    """Gradient-boosted trees: a candidate's logit is `base` plus each tree's leaf; a row
    goes left where its value is at or under the split's threshold (scikit-learn's rule).
    Each tree is laid out as a complete tree of `depth` levels, its splits in heap order
    (a leaf above the last level splits on +inf: every row goes left, to copies of it).
    Scoring compares every row with every split at once, then walks the trees in `depth`
    steps of a few array operations: all candidates down all trees together."""

    __slots__ = ("_features", "_leaves", "_thresholds", "base", "depth", "features", "trees",
                 "version")  # fmt: skip

    def __init__(
        self, version: str, features: Sequence[str], base: float, trees: Sequence[Sequence[Node]]
    ) -> None:
        import numpy as np

        self.version, self.features, self.base = version, tuple(features), base
        self.trees = tuple(tuple(t) for t in trees)
        if not self.trees or not all(t and walks(t, len(self.features)) for t in self.trees):
            raise RerankFileError(f"rerank model {version}: a tree does not fit its features")
        self.depth = max(_depth(t) for t in self.trees)
        count, splits = len(self.trees), 2**self.depth - 1
        self._features = np.zeros((count, splits), np.intp)  # each tree's splits, heap order
        self._thresholds = np.full((count, splits), np.inf)
        self._leaves = np.zeros((count, 2**self.depth))
        for n, nodes in enumerate(self.trees):
            self._lay(n, nodes, 0, 0, 0)
        self._features, self._thresholds = self._features.ravel(), self._thresholds.ravel()

    def _lay(self, tree: int, nodes: Sequence[Node], at: int, level: int, place: int) -> None:
        f, threshold, left, right, value = nodes[at]
        if level == self.depth:
            self._leaves[tree, place] = value
            return
        if f < 0:  # a leaf above the last level: every row goes left, to copies of it
            self._lay(tree, nodes, at, level + 1, 2 * place)
            self._lay(tree, nodes, at, level + 1, 2 * place + 1)
            return
        heap = 2**level - 1 + place
        self._features[tree, heap], self._thresholds[tree, heap] = f, threshold
        self._lay(tree, nodes, left, level + 1, 2 * place)
        self._lay(tree, nodes, right, level + 1, 2 * place + 1)

    def logits(self, rows: Any) -> Any:
        """Each row's logit (`rows`: candidates × `features`)."""
        import numpy as np

        rows = np.asarray(rows, np.float64)
        count, trees, splits = len(rows), len(self.trees), 2**self.depth - 1
        # every row against every split (as 0/1), then each tree's splits from `start`
        right = (rows.take(self._features, axis=1) > self._thresholds).view(np.int8).ravel()
        start = np.arange(0, count * trees * splits, splits, dtype=np.int32)
        start = start.reshape(count, trees)
        place = np.zeros((count, trees), np.int32)
        for level in range(self.depth):
            place = 2 * place + right.take(start + (2**level - 1) + place)
        leaves = np.arange(trees, dtype=np.int32) * 2**self.depth + place
        return self.base + self._leaves.ravel().take(leaves).sum(axis=1)


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
    except (KeyError, TypeError, ValueError) as exc:
        raise RerankFileError(f"rerank model file is malformed: {exc!r}") from exc
    if names != FEATURES:
        raise RerankFileError(
            f"rerank model {version} was trained on other features: retrain it with "
            "`python -m bench.recall.rerank`"
        )
    return Reranker(version, names, base, trees)


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
    if not ids:
        return ids, np.zeros((0, len(FEATURES)))
    words = _WORD.findall(query.text.lower())
    you, me = float(not _YOU.isdisjoint(words)), float(not _ME.isdisjoint(words))
    best = hits[0].score if hits else 1.0
    terms = max(len(query.terms), 1)
    near_rank = {i: 1.0 / (1 + r) for r, (i, _) in enumerate(nearest)}
    plain = []  # per candidate: BM25's four columns, the nearest's two
    for at, i in enumerate(ids):
        if at < len(hits):
            hit = hits[at]
            bm25 = (1.0, hit.score / best, 1.0 / (1 + at), len(hit.matched) / terms)
        else:
            bm25 = _NONE
        rank = near_rank.get(i)
        plain.append((*bm25, rank is not None, rank or 0.0))
    near = vectors.measures(ids, query.vector, token_ids(query.text))
    said = np.concatenate((np.array(plain, np.float64), near), axis=1)  # the first 14
    gaps = near[:, 2:6] - near[:, 2:6].max(axis=0)  # each below the best candidate's
    asked = said[:, _ASKED] * np.array((you, me, you, you, me, you, me))
    return ids, np.concatenate((said, gaps, asked), axis=1)


def choose(
    hits: Sequence[Hit],
    nearest: Sequence[tuple[int, bool]],
    entries: Mapping[int, Candidate],
    vectors: Vectors,
    query: RecallQuery,
    limit: int,
    model: Reranker | None = None,
) -> list[Hit]:
    """The hits to show, likeliest first: as many as `dense.fuse` would show, chosen by
    the model among BM25's `hits` and the `nearest` (id, whether its reply made it near).
    An exchange only the embedding found comes with no matched term, marked `near_reply`
    when its reply made it near."""
    if not hits:
        return []
    import numpy as np

    model = model or load()
    ids, rows = features(hits, nearest, vectors, query)
    agree = hits[0].exchange.id in [i for i, _ in nearest[:AGREE]]
    shown = min(len(hits) + (0 if agree else EXTRA), limit, len(ids))
    order = np.argsort(-model.logits(rows), kind="stable")[:shown]
    by_id = {h.exchange.id: h for h in hits}
    by_reply = {i for i, reply in nearest if reply}
    out = []
    for at in order.tolist():
        i = ids[at]
        found = by_id.get(i)
        out.append(found or Hit(entries[i].exchange, 0.0, (), near_reply=i in by_reply))
    return out
