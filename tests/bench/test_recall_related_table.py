"""The shipped related-word table is what `bench.recall.related` builds from the
package's embedding: a sample of its words rebuilt gives the same neighbours."""

from __future__ import annotations

import gzip
from pathlib import Path

from bench.recall import related as builder
from memory.recall import related


def test_a_rebuilt_sample_of_the_table_matches_the_shipped_file() -> None:
    """200 words' neighbours rebuilt from WordLlama's weights equal the file's, so the
    file is reproducible and nobody edited it by hand."""
    shipped = related.read_words()
    rebuilt = builder.build(sample=200)
    assert len(rebuilt) > 100
    assert rebuilt == {w: shipped.get(w) for w in rebuilt}


def test_the_table_written_reads_back_the_same(tmp_path: Path) -> None:
    """`write` and `parse` agree: a header naming the source, then word, tab and each
    neighbour with its cosine, nearest first."""
    table = {"car": [("vehicle", 0.73), ("sedan", 0.54)], "dog": [("pet", 0.66)]}
    path = tmp_path / "t.tsv.gz"
    builder.write(table, path)
    assert related.parse(path.read_bytes()) == table
    header = f"# {related.MODEL_FILE}: wordllama".encode()
    assert gzip.decompress(path.read_bytes()).startswith(header)
