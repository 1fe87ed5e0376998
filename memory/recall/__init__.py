"""Recall: indexing and searching a key's older exchanges (DESIGN.md, Recall)."""
