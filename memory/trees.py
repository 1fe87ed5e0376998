"""Gradient-boosted trees as the shipped model files write them: nodes, reading, checks.

Pure. The topic model's boosted head (`memory.topic.model.BoostedModel`, scored in pure
Python) and recall's re-ranker (`memory.recall.rerank.Reranker`, scored in numpy) read
the same node lists, written by scikit-learn through the trainers.
"""

from __future__ import annotations

from collections.abc import Sequence

# A tree's node: (feature index, threshold, left, right, value); a leaf's feature is -1.
# A row goes left when its value is at or under the threshold (scikit-learn's rule).
Node = tuple[int, float, int, int, float]


def logit(base: float, trees: Sequence[Sequence[Node]], values: Sequence[float]) -> float:
    """`base` plus the leaf each tree sends `values` to, node by node."""
    total = base
    for nodes in trees:
        node = nodes[0]
        while node[0] >= 0:
            node = nodes[node[2] if values[node[0]] <= node[1] else node[3]]
        total += node[4]
    return total


def walks(nodes: Sequence[Node], size: int) -> bool:
    """Each split reads one of `size` features and points further down its own tree (so
    a walk always ends)."""
    return all(
        f < size and (f < 0 or (i < left < len(nodes) and i < right < len(nodes)))
        for i, (f, _, left, right, _) in enumerate(nodes)
    )


def read_node(raw: object) -> Node:
    """One node of a model file: `[feature, threshold, left, right, value]`."""
    f, t, left, right, v = as_list(raw)
    return int(str(f)), float(str(t)), int(str(left)), int(str(right)), float(str(v))


def as_list(value: object) -> list[object]:
    """`value` if it is a JSON list; TypeError saying what it is otherwise."""
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value
