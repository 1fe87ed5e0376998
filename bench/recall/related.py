"""Build recall's table of related words (`memory/recall/models/related-v2.tsv.gz`).

    python -m bench.recall.related [--check]

Word neighbours from a static embedding that ships inside its package: WordLlama
(`wordllama` on PyPI, MIT licence, a dev dependency; its `l2_supercat` weights, 256
dimensions, are the token embeddings of Llama 2's 32,000-token vocabulary, distilled for
similarity). No data set of ours or any probe goes into it: the vocabulary is the
tokenizer's own whole-word tokens (a `▁` prefix, Latin letters only, 3 or more letters,
no function word), each word's neighbours are the whole words nearest it by cosine
(`TOP` at most, each at `THRESHOLD` or more), and the file keeps them as words: the
product stems both sides when it loads it (`memory.recall.related`), so a change of
stemmer needs no rebuild. `--check` rebuilds a sample of words and compares it with the
shipped file (the test suite does the same).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memory.recall import related
from memory.text.fold import fold
from memory.text.stopwords import RECALL_STOP_WORDS

SOURCE = "wordllama l2_supercat_256"
TOP = 10  # neighbours looked at per word
THRESHOLD = 0.45  # cosine at or above which a neighbour is kept (0.5: TIAGE train 79.3 -> 81.2 %)
MIN_LETTERS = 3
_WORD = re.compile(r"[a-záéíóúñü]+")
OUT = Path(related.__file__).parent / "models" / related.MODEL_FILE


def embeddings() -> tuple[list[str], Any]:
    """The vocabulary's whole words and their unit vectors (numpy, float32)."""
    try:
        import numpy as np
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - the dev extra installs them
        raise SystemExit(f"bench.recall.related needs the dev extra (wordllama): {exc}") from exc
    root = Path(wordllama.__file__).parent
    # Read from the package's own files: its loader looks for the tokenizer in a folder
    # the wheel does not have and would try to download it.
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    weights = root / "weights" / "l2_supercat_256.safetensors"
    with safe_open(str(weights), framework="np", device="cpu") as fh:
        matrix = fh.get_tensor("embedding.weight").astype(np.float32)
    words: dict[str, int] = {}
    for token, index in sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1]):
        word = token[1:]
        if not token.startswith("▁") or len(word) < MIN_LETTERS or not _WORD.fullmatch(word):
            continue
        folded = fold(word)
        if folded in RECALL_STOP_WORDS or folded in words:
            continue
        words[folded] = index
    names = list(words)
    vectors = matrix[[words[w] for w in names]]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return names, vectors


def neighbours(
    names: Sequence[str], vectors: Any, rows: Iterable[int]
) -> dict[str, list[tuple[str, float]]]:
    """Each row's word → its nearest words at `THRESHOLD` or more, nearest first."""
    import numpy as np

    out: dict[str, list[tuple[str, float]]] = {}
    for row in rows:
        sims = vectors @ vectors[row]
        sims[row] = -1.0
        best = np.argpartition(-sims, TOP)[:TOP]
        kept = sorted(
            ((names[j], round(float(sims[j]), 2)) for j in best if sims[j] >= THRESHOLD),
            key=lambda pair: (-pair[1], pair[0]),
        )
        if kept:
            out[names[row]] = kept
    return out


def write(table: dict[str, list[tuple[str, float]]], path: Path) -> None:
    lines = [f"# {related.MODEL_FILE}: {SOURCE}, top {TOP}, cosine >= {THRESHOLD}"]
    for word in sorted(table):
        lines.append(word + "\t" + " ".join(f"{n}:{s:.2f}" for n, s in table[word]))
    # mtime=0: the same table gives the same bytes
    with gzip.GzipFile(path, "wb", mtime=0) as fh:
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))


def build(sample: int | None = None) -> dict[str, list[tuple[str, float]]]:
    names, vectors = embeddings()
    step = 1 if sample is None else max(1, len(names) // sample)
    rows = range(0, len(names), step)
    return neighbours(names, vectors, rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild a sample, compare")
    args = parser.parse_args(argv)
    if args.check:
        shipped = related.read_words()
        rebuilt = build(sample=200)
        differ = [w for w, near in rebuilt.items() if shipped.get(w) != near]
        print(f"{len(rebuilt)} words rebuilt, {len(differ)} differ from {OUT.name}")
        sys.exit(1 if differ else 0)
    table = build()
    write(table, OUT)
    pairs = sum(len(v) for v in table.values())
    print(f"wrote {OUT} ({len(table)} words, {pairs} neighbours, {OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
