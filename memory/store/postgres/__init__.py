"""The conversation store on PostgreSQL, for several workers on one database.

Driver: psycopg 3 with psycopg-pool. It is typed, maps rows by column name through row
factories (`dict_row`), prepares each statement server-side at its first run on a
connection, and has a maintained async pool with health checks. asyncpg is faster on
raw throughput, but the store is not where a turn spends its time (a model call takes
seconds, a store round trip a fraction of a millisecond: see `bench/workers.py`), so the
clearer API wins.

Layout, as SQLite's (`memory/store/sqlite/`): `store.py` composes one part per port
over the one pool (`connection.py`): `turns.py`, `summaries.py`, `episodes.py`,
`operator.py`, `inbox.py`, `locks.py` (the per-chat lock across workers and the claim),
`recall.py`; `sql.py` holds every statement, `rows.py` maps rows to our dataclasses by
column name, `migrations.py` the schema as named steps. Import `PostgresStore` from
`memory.store.postgres.store`.
"""
