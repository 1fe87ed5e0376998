"""Benchmarks of the PostgreSQL backend that need more than `bench.workers`."""
