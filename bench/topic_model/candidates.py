"""Topic model candidates side by side, on the training data only (grouped CV).

    python -m bench.topic_model.candidates [--folds 5] [--limit N]

The shipped support head is a logistic regression over `memory.topic.features` (the chat
head is gradient-boosted since session 31: `bench.topic_model.train` scores both kinds
with the product's replay). Two candidates the issue named are measured beside the
regression, on the same rows and the same folds:

- `lr + embedding`: the same regression with four more features, cosines from a static
  sentence embedding (mean of WordLlama `l2_supercat_256` token vectors, the package
  `bench.recall.related` reads; MIT, no download): the message against the window's last
  user message, its closest user message, their centroid, and the last reply;
- `gradient boosting`: scikit-learn's `HistGradientBoostingClassifier` (150 trees of
  depth 3, learning rate 0.05) over the product's features.

Rows are `bench.topic_model.train`'s: TIAGE train dialogues, the labelled support
sessions' `fit` half, the written training sessions and spliced multi-case sessions,
each turn against the episode since its last gold reset, the folds grouped by dialogue.
Per arm and support weight: support recall at precision ≥ 0.95 and ≥ 0.99 (with the
distractor turns it would reset: side questions, asides, thanks…) and TIAGE's best F1.
Gold episodes, not the trainer's replay with the revert: a comparison of scorers, not
the product's figures (those come from `bench.topics`, `bench.topic_tiage` and
`bench.blind`). TIAGE dev and the blind sets are never read here.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import topic_tiage, topics
from bench.blind.data import DISTRACTOR_KINDS
from bench.topic_model import data as support_data
from bench.topic_model import train
from memory.topic.context import TopicContext

SUPPORT_WEIGHTS = (0.3, 3.0)
PRECISIONS = (0.95, 0.99)
Scorer = Callable[[Any, Any, Any, Any], Any]  # (x_train, y_train, w_train, x_test) -> p


@dataclass(frozen=True, slots=True)
class Rows:
    x: Any  # the product's features
    embedding: Any  # the four cosines
    y: Any
    support: Any  # bool per row
    distractor: Any
    fold: Any


def embedder() -> Callable[[str], Any]:
    """Text → unit vector: the mean of WordLlama's token vectors (from the wheel's files;
    its loader would look for a tokenizer folder the wheel lacks and try to download)."""
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer

    root = Path(wordllama.__file__).parent
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    weights = root / "weights" / "l2_supercat_256.safetensors"
    with safe_open(str(weights), framework="np", device="cpu") as fh:
        matrix = fh.get_tensor("embedding.weight").astype(np.float32)

    def embed(text: str) -> Any:
        ids = tokenizer.encode(text.lower()).ids
        vector = matrix[ids].mean(0) if ids else np.zeros(matrix.shape[1], np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    return embed


def cosines(ctx: TopicContext, embed: Callable[[str], Any]) -> tuple[float, ...]:
    """The message against the last user message, the closest one, their centroid and
    the last reply (0 for an empty window)."""
    if not ctx.window:
        return (0.0, 0.0, 0.0, 0.0)
    message = embed(ctx.message)
    users = [embed(ex.user_text) for ex in ctx.window]
    centroid = np.mean(users, 0)
    centroid /= float(np.linalg.norm(centroid)) or 1.0
    reply = embed(ctx.window[-1].reply_text)
    return (
        float(message @ users[-1]),
        max(float(message @ u) for u in users),
        float(message @ centroid),
        float(message @ reply),
    )


def rows(units: Sequence[train.Unit], embed: Callable[[str], Any]) -> Rows:
    xs, es, ys, sup, dist, folds = [], [], [], [], [], []
    for unit in units:
        start = 0
        for i in range(1, len(unit.gold)):
            xs.append(unit.features(start, i))
            es.append(cosines(unit.build(start, i), embed))
            ys.append(unit.gold[i])
            sup.append(unit.source == "support")
            dist.append(unit.source == "support" and unit.kinds[i] in DISTRACTOR_KINDS)
            folds.append(unit.fold)
            if unit.gold[i]:
                start = i
    return Rows(*(np.array(v) for v in (xs, es, ys, sup, dist, folds)))


def logistic(x: Any, y: Any, w: Any, test: Any) -> Any:
    model = train.fit(x, y.astype(float), w, 0.03)
    z = model.bias + ((test - model.means) / model.scales) @ model.weights
    return 1 / (1 + np.exp(-z))


def boosting(x: Any, y: Any, w: Any, test: Any) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=150, learning_rate=0.05, max_depth=3, l2_regularization=1.0, random_state=0
    )
    model.fit(x, y, sample_weight=w)
    return model.predict_proba(test)[:, 1]


def cross_validated(x: Any, r: Rows, weight: float, scorer: Scorer, k: int) -> Any:
    """Each row's probability from a model fitted without its fold."""
    w = np.where(r.support, weight, 1.0)
    p = np.zeros(len(r.y))
    for f in range(k):
        fit, held = r.fold != f, r.fold == f
        if held.any() and fit.any():
            p[held] = scorer(x[fit], r.y[fit], w[fit], x[held])
    return p


def at_precision(p: Any, r: Rows, precision: float) -> tuple[float, float, int] | None:
    """(threshold, support recall, distractor resets) at the lowest threshold whose
    support precision reaches `precision`; None when none does."""
    p_sup, y_sup = p[r.support], r.y[r.support]
    for t in np.linspace(0.05, 0.995, 190):
        said = p_sup >= t
        tp, fp = int((said & y_sup).sum()), int((said & ~y_sup).sum())
        if tp and tp / (tp + fp) >= precision:
            return float(t), tp / max(int(y_sup.sum()), 1), int((p[r.distractor] >= t).sum())
    return None


def best_f1(p: Any, r: Rows) -> float:
    y = r.y[~r.support]
    best = 0.0
    for t in np.linspace(0.05, 0.95, 91):
        said = p[~r.support] >= t
        tp, fp, fn = (said & y).sum(), (said & ~y).sum(), (~said & y).sum()
        best = max(best, float(2 * tp / max(2 * tp + fp + fn, 1)))
    return best


def main(argv: Sequence[str] | None = None) -> dict[str, dict[float, dict[str, object]]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0, help="first N dialogues of each set")
    args = parser.parse_args(argv)
    dialogs = topic_tiage.load(topic_tiage.DEFAULT_DATA, "train")
    sessions = list(support_data.load(topics.DEFAULT_DATA, written=support_data.WRITTEN).training)
    if args.limit:
        dialogs, sessions = dialogs[: args.limit], sessions[: args.limit]
    units = train.build_units(dialogs, sessions, args.folds, train.SPLICE)
    embed = embedder()
    r = rows(units, embed)
    started = time.perf_counter()
    for unit in units[:50]:
        cosines(unit.build(0, len(unit.gold) - 1), embed)
    micros = (time.perf_counter() - started) / max(min(len(units), 50), 1) * 1e6
    print(
        f"== topic model candidates (grouped {args.folds}-fold CV on the training rows: "
        f"{int((~r.support).sum())} TIAGE, {int(r.support.sum())} support, "
        f"{int(r.distractor.sum())} distractors); the embedding's cosines: {micros:.0f} µs a turn"
    )
    arms: dict[str, tuple[Any, Scorer]] = {
        "logistic regression (shipped)": (r.x, logistic),
        "lr + embedding cosines": (np.hstack([r.x, r.embedding]), logistic),
        "gradient boosting": (r.x, boosting),
    }
    out: dict[str, dict[float, dict[str, object]]] = {}
    for name, (x, scorer) in arms.items():
        out[name] = {}
        for weight in SUPPORT_WEIGHTS:
            p = cross_validated(x, r, weight, scorer, args.folds)
            cells = {f"P≥{q}": at_precision(p, r, q) for q in PRECISIONS}
            out[name][weight] = {**cells, "tiage_f1": best_f1(p, r)}
            shown = "   ".join(
                f"{key}: " + (f"R {c[1]:.3f} ({c[2]} distractors)" if c else "none")
                for key, c in cells.items()
            )
            print(f"  {name:<30} w {weight:<4} {shown}   TIAGE F1 {best_f1(p, r):.3f}")
    return out


if __name__ == "__main__":
    main()
