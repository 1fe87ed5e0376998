"""The recall index on PostgreSQL: a `tsvector` per signal exchange, GIN-indexed.

Same design as SQLite's (`memory.store.sqlite.recall_index`), so both rank alike:

- **Terms from Python.** The vector holds the `memory.recall.terms` output of the
  exchange, written as a `tsvector` literal (each term quoted, one position per
  occurrence, so term frequency survives). `to_tsvector` is not used: its parser splits
  the hard-fact terms (`10_0_0_5`) at each `_`. The query is a `tsquery` of quoted
  lexemes, so nothing a user writes can become tsquery syntax; index and query fold
  accents and stem identically because both come from `terms`.
- **Per-key lexemes.** Every lexeme is `k<session id>_<term>`, plus a document mark
  `k<session id>__n`: a search reads only its key's GIN posting lists, however many
  keys share the table, and its statistics (the key's indexed exchanges, each term's
  document frequency) are counts of its own postings. `memory.recall.rank` then scores
  the candidates by BM25 over those statistics, as on SQLite.
- **A side table keyed by exchange id** (`recall_index`, `ON DELETE CASCADE`): a reset
  needs nothing and neither does `/undo` (the search filters the episode through
  `exchanges`, whose ids stay when undo moves them); `/forget` deletes the session,
  which cascades to its exchanges and their vectors.
- Written in the statement that stores the exchange (`sql.RECORD_EXCHANGE`), for signal
  exchanges only: noise is never indexed. The GIN index has `fastupdate = off`, so a
  search never scans a pending list holding other keys' recent entries.

PostgreSQL limits a lexeme to 2047 bytes, a vector to 1 MB and a lexeme to 256
positions: longer terms are not indexed, an exchange past 1 MB of terms keeps its first
ones, and a term said more than 256 times in one exchange counts 256 times.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg.rows import dict_row

from memory.recall.port import RecallQuery
from memory.recall.rank import (
    CANDIDATES,
    COMMON_SHARE,
    Candidate,
    Hit,
    idf,
    rank,
    rank_with_previous,
    searchable,
)
from memory.recall.terms import QueryTerm, terms
from memory.store.turns import NewExchange
from memory.types import Exchange

if TYPE_CHECKING:
    from memory.store.postgres.connection import PostgresDatabase

log = structlog.get_logger(__name__)
Conn = psycopg.AsyncConnection[Any]

# Matching exchanges read per search, best first by an IDF-weighted count of the terms
# they match (then `ts_rank`): `rank` re-ranks these few over the key's own statistics
# (`rank.CANDIDATES`, the same for every backend).
MAX_LEXEME = 2047  # bytes
MAX_POSITIONS = 256
MAX_VECTOR = 1_000_000  # bytes of lexemes, under PostgreSQL's 1 MB
BACKFILL_BATCH = 5_000
LOG_FROM = 20_000  # a backfill this large logs its progress

SCHEMA = """
CREATE TABLE recall_index (
    exchange_id BIGINT PRIMARY KEY REFERENCES exchanges(id) ON DELETE CASCADE,
    terms TSVECTOR NOT NULL
);
"""
GIN = "CREATE INDEX recall_index_terms ON recall_index USING GIN (terms) WITH (fastupdate = off)"
# The generated vector of migration 0002 (raw text through unaccent): replaced by this.
DROP_OLD = """
DROP INDEX IF EXISTS exchanges_search;
ALTER TABLE exchanges DROP COLUMN IF EXISTS search;
DROP FUNCTION IF EXISTS ventana_fold(TEXT);
"""
# Per query lexeme (the document mark first): how many of the index's rows hold it. The
# array through a scalar subquery, as in `SEARCH_ONE`: else every run is planned anew.
STATS = (
    "SELECT u.n, (SELECT count(*) FROM recall_index r WHERE r.terms @@ u.q) AS df"
    " FROM unnest((SELECT %(each)s::tsquery[])) WITH ORDINALITY AS u(q, n) ORDER BY u.n"
)
# The episode's matching exchanges below `before`, with their terms (one per occurrence).
# The key's matches are read first through the GIN index (MATERIALIZED: the planner
# would otherwise walk the whole episode once it is large), then filtered by episode.
SEARCH = (
    "WITH m AS MATERIALIZED (SELECT exchange_id, terms FROM recall_index"
    "   WHERE terms @@ %(query)s::tsquery)"
    " SELECT x.id, x.episode_id, x.user_text, x.reply_text, x.created_at,"
    " ARRAY(SELECT t.lexeme FROM unnest(m.terms) t, generate_series(1, cardinality(t.positions))"
    "   WHERE t.lexeme <> %(mark)s) AS terms"
    " FROM m JOIN exchanges x ON x.id = m.exchange_id"
    " WHERE x.episode_id = %(ep)s AND x.id < %(before)s"
    " ORDER BY (SELECT sum(u.w) FROM unnest(%(each)s::tsquery[], %(weights)s::float8[]) AS u(q, w)"
    "   WHERE m.terms @@ u.q) DESC, ts_rank(m.terms, %(query)s::tsquery) DESC, x.id DESC"
    " LIMIT %(limit)s"
)
# `STATS` and `SEARCH` in one round trip, for a search of the current episode only: the
# statistics, the searchable terms and their IDF weights (`rank.searchable`, `rank.idf`)
# computed by the server, the candidates ordered as `SEARCH` orders them, and every
# term's document frequency on each row (`dfs`, in `each`'s order), so `rank` re-ranks
# over exactly the statistics `key_stats` would have read. No row: no candidate.
# Planned once per connection, not at every run: every value (the arrays, the episode,
# the id bound, the LIMIT…) is read through a scalar subquery, so a custom plan sees none
# of them and costs what the generic one does. Else the server keeps choosing custom
# plans, ~0.3 ms of planning a search: on a large table a custom plan that saw the LIMIT
# and the episode always looked cheaper (`bench.postgres.recall`, 2,000 keys: 0 generic
# plans in 300 searches). Each candidate is looked up by its id (the LATERAL … OFFSET 0
# fence), never by walking the whole episode, whatever a generic plan would guess of the
# episode's size.
SEARCH_ONE = (
    "WITH s AS MATERIALIZED (SELECT u.n, u.q, u.w, u.hard,"
    "   (SELECT count(*) FROM recall_index r WHERE r.terms @@ u.q) AS df"
    "   FROM unnest((SELECT %(each)s::tsquery[]), (SELECT %(weights)s::float8[]),"
    "   (SELECT %(hard)s::bool[])) WITH ORDINALITY AS u(q, w, hard, n)),"
    " d AS (SELECT df AS docs FROM s WHERE n = 1),"
    " k AS MATERIALIZED (SELECT s.q,"
    "   s.w * ln(1.0 + (d.docs - s.df + 0.5)::float8 / (s.df + 0.5)::float8) AS w"
    "   FROM s, d WHERE s.n > 1 AND s.df > 0"
    "   AND (s.hard OR s.df <= greatest(1.0, (SELECT %(common)s::float8) * d.docs))),"
    " m AS MATERIALIZED (SELECT exchange_id, terms FROM recall_index"
    "   WHERE terms @@ (SELECT string_agg(k.q::text, ' | ')::tsquery FROM k))"
    " SELECT x.id, x.episode_id, x.user_text, x.reply_text, x.created_at,"
    " ARRAY(SELECT t.lexeme FROM unnest(m.terms) t, generate_series(1, cardinality(t.positions))"
    "   WHERE t.lexeme <> (SELECT %(mark)s::text)) AS terms,"
    " (SELECT array_agg(s.df ORDER BY s.n) FROM s) AS dfs"
    " FROM m, LATERAL (SELECT x.id, x.episode_id, x.user_text, x.reply_text, x.created_at"
    "   FROM exchanges x WHERE x.id = m.exchange_id AND x.episode_id = (SELECT %(ep)s::bigint)"
    "   AND x.id < (SELECT %(before)s::bigint) OFFSET 0) x"
    " ORDER BY (SELECT sum(k.w) FROM k WHERE m.terms @@ k.q) DESC,"
    "   ts_rank(m.terms, (SELECT string_agg(k.q::text, ' | ')::tsquery FROM k)) DESC, x.id DESC"
    " LIMIT (SELECT %(limit)s::int)"
)
SIZE = (
    "SELECT (SELECT count(*) FROM recall_index r JOIN exchanges x ON x.id = r.exchange_id"
    "   JOIN sessions s ON s.id = x.session_id WHERE s.key = %s) AS indexed,"
    " pg_total_relation_size('recall_index') AS bytes"
)
_UNBOUNDED = 2**62


def _prefix(session_id: int) -> str:
    return f"k{session_id}_"


def _quoted(lexeme: str) -> str:
    """A lexeme as tsvector/tsquery input: quoted, its quotes and backslashes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def vector(session_id: int, user_text: str, reply_text: str) -> str:
    """The `tsvector` literal indexed for one signal exchange (see the module docstring)."""
    prefix = _prefix(session_id)
    parts, size = [f"{_quoted(prefix + '_n')}:1"], 0
    for term, n in Counter(terms(user_text) + terms(reply_text)).items():
        lexeme = prefix + term
        length = len(lexeme.encode())
        if length > MAX_LEXEME:
            continue
        size += length
        if size > MAX_VECTOR:
            break
        positions = ",".join(str(p) for p in range(1, min(n, MAX_POSITIONS) + 1))
        parts.append(f"{_quoted(lexeme)}:{positions}")
    return " ".join(parts)


def indexed(new: NewExchange) -> str | None:
    """What `sql.RECORD_EXCHANGE` indexes with the exchange: its vector, or nothing for
    noise (never indexed)."""
    return vector(new.session_id, new.user_text, new.reply_text) if new.signal else None


def _term_query(session_id: int, term: str) -> str:
    return _quoted(_prefix(session_id) + term)


def stats_params(session_id: int, query: Sequence[QueryTerm]) -> dict[str, Any]:
    """`STATS` for `query`: the document mark's lexeme, then each term's."""
    return {
        "each": [_term_query(session_id, "_n"), *(_term_query(session_id, q.term) for q in query)]
    }


async def key_stats(
    conn: Conn, session_id: int, query: Sequence[QueryTerm]
) -> tuple[int, dict[str, int]]:
    """The key's indexed exchanges and the document frequency of each query term found."""
    cur = await conn.cursor(row_factory=dict_row).execute(STATS, stats_params(session_id, query))
    counts = [int(r["df"]) for r in await cur.fetchall()]
    return counts[0], {q.term: n for q, n in zip(query, counts[1:], strict=True) if n}


def search_params(
    session_id: int,
    episode_id: int,
    wanted: Sequence[QueryTerm],
    df: dict[str, int],
    docs: int,
    before: int | None,
) -> dict[str, Any]:
    """`SEARCH` for the searchable terms: candidates ordered by the IDF-weighted sum of
    the terms they match."""
    each = [_term_query(session_id, q.term) for q in wanted]
    return {
        "mark": _prefix(session_id) + "_n",
        "query": " | ".join(each),
        "each": each,
        "weights": [q.weight * idf(df[q.term], docs) for q in wanted],
        "ep": episode_id,
        "before": _UNBOUNDED if before is None else before,
        "limit": CANDIDATES,
    }


def search_one_params(query: RecallQuery) -> dict[str, Any]:
    """`SEARCH_ONE` for `query` (its current episode, `id < before`)."""
    terms_ = query.terms
    return {
        "each": [
            _term_query(query.session_id, "_n"),
            *(_term_query(query.session_id, q.term) for q in terms_),
        ],
        "weights": [0.0, *(q.weight for q in terms_)],
        "hard": [False, *(q.hard for q in terms_)],
        "common": COMMON_SHARE,
        "mark": _prefix(query.session_id) + "_n",
        "ep": query.episode_id,
        "before": _UNBOUNDED if query.before is None else query.before,
        "limit": CANDIDATES,
    }


async def search_one(conn: Conn, query: RecallQuery) -> list[Hit]:
    """The ranked hits of a search of the current episode alone, in one statement."""
    if query.before is not None and query.before <= 0:
        return []
    cur = await conn.cursor(row_factory=dict_row).execute(SEARCH_ONE, search_one_params(query))
    rows = await cur.fetchall()
    if not rows:
        return []
    counts = [int(n) for n in rows[0]["dfs"]]
    docs = counts[0]
    df = {q.term: n for q, n in zip(query.terms, counts[1:], strict=True) if n}
    wanted = searchable(query.terms, df, docs)
    cut = len(_prefix(query.session_id))
    return rank(wanted, [_candidate(r, cut) for r in rows], df, docs, query.limit)


def _candidate(row: dict[str, Any], cut: int) -> Candidate:
    exchange = Exchange(
        int(row["id"]), int(row["episode_id"]), row["user_text"], row["reply_text"], True,
        None, row["created_at"],
    )  # fmt: skip
    return Candidate(exchange, tuple(t[cut:] for t in row["terms"]))


async def backfill(conn: Conn, *, batch: int = BACKFILL_BATCH, log_from: int = LOG_FROM) -> int:
    """Index every stored signal exchange not yet indexed, in batches of `batch`, in the
    caller's transaction; progress is logged when at least `log_from` rows are due."""
    cur = conn.cursor(row_factory=dict_row)
    await cur.execute(
        "SELECT count(*) AS n FROM exchanges x WHERE x.signal"
        " AND NOT EXISTS (SELECT 1 FROM recall_index r WHERE r.exchange_id = x.id)"
    )
    row = await cur.fetchone()
    total, done, last = int(row["n"]) if row else 0, 0, 0
    while done < total:
        await cur.execute(
            "SELECT x.id, x.session_id, x.user_text, x.reply_text FROM exchanges x"
            " WHERE x.signal AND x.id > %s"
            " AND NOT EXISTS (SELECT 1 FROM recall_index r WHERE r.exchange_id = x.id)"
            " ORDER BY x.id LIMIT %s",
            (last, batch),
        )
        rows = await cur.fetchall()
        if not rows:
            break
        await cur.executemany(
            "INSERT INTO recall_index (exchange_id, terms) VALUES (%s, %s::tsvector)",
            [
                (r["id"], vector(int(r["session_id"]), r["user_text"], r["reply_text"]))
                for r in rows
            ],
        )
        last, done = int(rows[-1]["id"]), done + len(rows)
        if total >= log_from:
            log.info("recall_backfill", done=done, total=total)
    return done


async def migrate(conn: Conn) -> None:
    """The migration: the old generated vector out, the side table in, backfilled, then
    its GIN index (built once over the backfilled rows, quicker than row by row)."""
    await conn.execute(DROP_OLD)
    await conn.execute(SCHEMA)
    await backfill(conn)
    await conn.execute(GIN)


async def _candidates(
    conn: Conn,
    query: RecallQuery,
    episode_id: int,
    before: int | None,
    wanted: Sequence[QueryTerm],
    df: dict[str, int],
    docs: int,
) -> list[Candidate]:
    """The episode's best `CANDIDATES` matches with `id < before` (None: no bound)."""
    if before is not None and before <= 0:
        return []
    params = search_params(query.session_id, episode_id, wanted, df, docs, before)
    cur = await conn.cursor(row_factory=dict_row).execute(SEARCH, params)
    cut = len(_prefix(query.session_id))
    return [_candidate(r, cut) for r in await cur.fetchall()]


class PostgresRecall:
    """`RecallIndex` on PostgreSQL: the recall part of `PostgresStore`."""

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db

    async def recall(self, query: RecallQuery) -> list[Hit]:
        """The ranked hits of `query` in the episode's exchanges with `id < before`: the
        key's statistics, its best candidates, `rank` over them."""
        session_id = query.session_id
        if not query.terms or query.limit <= 0:
            return []
        async with self.db.connection() as conn:
            if query.previous is None:  # the common case: one round trip
                return await search_one(conn, query)
            docs, df = await key_stats(conn, session_id, query.terms)
            wanted = searchable(query.terms, df, docs)
            if not wanted:
                return []
            current = await _candidates(
                conn, query, query.episode_id, query.before, wanted, df, docs
            )
            previous = await _candidates(conn, query, query.previous, None, wanted, df, docs)
        return rank_with_previous(wanted, current, previous, df, docs, query.limit)

    async def recall_index_size(self, key: str) -> tuple[int, int]:
        """(indexed exchanges of `key`, bytes of the recall table and its GIN index)."""
        async with self.db.connection() as conn:
            cur = await conn.cursor(row_factory=dict_row).execute(SIZE, (key,))
            row = await cur.fetchone()
        return (int(row["indexed"]), int(row["bytes"])) if row else (0, 0)
