"""The recall index on SQLite: FTS5 tables of each key's signal exchanges.

Design, and why:

- **Per-key terms.** Every indexed term is written as `k<session id>_<term>` (terms from
  `memory.recall.terms`, so stemming and folding happen in Python, identically for
  index and query). One key's search looks up only its own terms: it never walks
  another key's doclists, however many keys share the table. Its statistics (document
  frequencies, its count of documents `k<id>__n`) come from the `fts5vocab` table, so
  BM25 is computed over the key's own exchanges (`memory.recall.rank`); the store keeps
  what it read of them in memory (`memory.recall.stats`), so a key's next searches read
  only the terms it has not seen.
- **rowid = exchange id.** A reset needs nothing (the search filters the current
  episode through `exchanges`), and neither does `/undo` (exchanges move episode, ids
  stay).
- **Shards.** `SHARDS` tables by session id: `/forget` deletes the key's rows and then
  merges its shard into one segment (`optimize`), so no segment keeps the deleted terms;
  with `PRAGMA secure_delete` the freed pages are zeroed. SQLite 3.40 has no FTS5
  `secure-delete` option (3.44), hence the merge; a shard is a fraction of the index,
  so a forget rewrites only that fraction.
- Noise is never indexed: `index_exchange` is called only for signal exchanges.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from memory.recall.hot import Indexed, KeyIndex
from memory.recall.port import RecallQuery
from memory.recall.rank import CANDIDATES, Candidate, Hit, rank, rank_with_previous, searchable
from memory.recall.terms import terms
from memory.store.sqlite.connection import in_transaction
from memory.types import Exchange

SHARDS = 8
# Matching exchanges read per search (`rank.CANDIDATES`), FTS5's own BM25 first
# (key-local document frequencies; its N is the whole table's): `memory.recall.rank`
# re-ranks these few in Python over the key's own statistics.
PROGRESS_FROM = 20_000  # a backfill this large shows a progress bar
# FTS5 merges a level's segments at once when it holds this many (its default: 16).
# Every commit adds a one-exchange segment and a search seeks each term in every
# segment; FTS5's own incremental merging runs only every 64 pages written, so at 16
# level 0 piled up to 15 segments between merges and a search cost up to twice as much.
CRISIS_MERGE = 4
_BATCH = 5_000
LOAD_BATCH = 500  # exchanges a key's read into memory takes per round trip (~10 ms)


def _first(cur: sqlite3.Cursor) -> Any:
    """The first row, with the statement run to its end (no read snapshot left open)."""
    rows = cur.fetchall()
    return rows[0] if rows else None


def table(session_id: int) -> str:
    return f"recall_fts_{session_id % SHARDS}"


def _vocab(session_id: int) -> str:
    return f"recall_vocab_{session_id % SHARDS}"


def create_tables(db: sqlite3.Connection) -> None:
    """The migration: the shards, their vocabularies and the backfill mark."""
    parts = [
        "CREATE TABLE recall_meta (built INTEGER NOT NULL)",
        "INSERT INTO recall_meta VALUES (0)",
    ]
    for shard in range(SHARDS):
        parts.append(
            f"CREATE VIRTUAL TABLE recall_fts_{shard} USING fts5("
            "body, tokenize = \"unicode61 remove_diacritics 0 tokenchars '_'\")"
        )
        parts.append(
            f"CREATE VIRTUAL TABLE recall_vocab_{shard} USING fts5vocab(recall_fts_{shard}, 'row')"
        )
    for statement in parts:
        db.execute(statement)


def tune(db: sqlite3.Connection) -> None:
    """The shards' merge setting (kept by FTS5 in each shard's config table)."""
    for shard in range(SHARDS):
        name = f"recall_fts_{shard}"
        db.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('crisismerge', {CRISIS_MERGE})")


def _prefix(session_id: int) -> str:
    return f"k{session_id}_"


def index_exchange(
    db: sqlite3.Connection,
    exchange_id: int,
    session_id: int,
    user_text: str,
    reply_text: str,
    words: Sequence[str] | None = None,
) -> None:
    """Index one signal exchange, in the caller's transaction; `words`: its terms
    (`exchange_terms`), when the caller has them already."""
    if words is None:
        words = exchange_terms(user_text, reply_text)
    db.execute(
        f"INSERT INTO {table(session_id)} (rowid, body) VALUES (?, ?)",
        (exchange_id, body(session_id, words)),
    )


def body(session_id: int, words: Sequence[str]) -> str:
    """What is indexed for one exchange: its per-key terms and the key's document mark."""
    prefix = _prefix(session_id)
    return " ".join([f"{prefix}_n", *(prefix + t for t in words)])


def exchange_terms(user_text: str, reply_text: str) -> tuple[str, ...]:
    """What is indexed of one exchange: the terms of its user text, then its reply's."""
    return (*terms(user_text), *terms(reply_text))


def load_key(
    db: sqlite3.Connection, index: KeyIndex, after: int = 0, limit: int = LOAD_BATCH
) -> int | None:
    """Read into `index` (`memory.recall.hot`) the key's next `limit` indexed exchanges
    with `id > after`, found through the key's own document mark (so only its entries
    are read), the texts only of those in its episode. The last id read, or None when
    there were no more."""
    name, prefix, episode = table(index.session_id), _prefix(index.session_id), index.episode_id
    rows = db.execute(
        f"SELECT f.rowid, f.body, x.episode_id,"
        " CASE WHEN x.episode_id = ? THEN x.user_text END,"
        " CASE WHEN x.episode_id = ? THEN x.reply_text END, x.created_at"
        f" FROM {name} f JOIN exchanges x ON x.id = f.rowid"
        f" WHERE {name} MATCH ? AND f.rowid > ? ORDER BY f.rowid LIMIT ?",
        (episode, episode, f'"{prefix}_n"', after, limit),
    ).fetchall()
    for row in rows:
        index.add(_indexed(row, prefix))
    return int(rows[-1][0]) if rows else None


def _indexed(row: Sequence[Any], prefix: str) -> Indexed:
    candidate = _candidate(row, prefix)
    return Indexed(candidate.exchange, tuple(map(sys.intern, candidate.terms)))


def search(db: sqlite3.Connection, query: RecallQuery) -> list[Hit]:
    """The ranked hits of `query` in its episode's exchanges with `id < before` (and in
    all of `query.previous`, the episode a recent automatic reset closed, ranked first)."""
    if not query.terms or query.limit <= 0:
        return []
    docs, df = key_stats(db, query.session_id, [q.term for q in query.terms])
    return search_with(db, query, docs or 0, df)


def key_stats(
    db: sqlite3.Connection, session_id: int, terms: Sequence[str], *, docs: bool = True
) -> tuple[int | None, dict[str, int]]:
    """From the shard's vocabulary: the key's indexed exchanges (None unless `docs`) and
    the document frequency of each of `terms` it holds (a term not indexed is left out)."""
    prefix = _prefix(session_id)
    names = [*([prefix + "_n"] if docs else []), *(prefix + t for t in terms)]
    if not names:
        return None, {}
    marks = ", ".join("?" * len(names))
    sql = f"SELECT term, doc FROM {_vocab(session_id)} WHERE term IN ({marks})"
    stats = dict(db.execute(sql, names))
    count = int(stats.pop(prefix + "_n", 0)) if docs else None
    return count, {name.removeprefix(prefix): int(n) for name, n in stats.items()}


def search_with(
    db: sqlite3.Connection, query: RecallQuery, docs: int, df: Mapping[str, int]
) -> list[Hit]:
    """`search` over the key's statistics as given (`memory.recall.stats`)."""
    wanted = searchable(query.terms, df, docs)
    if not wanted or query.limit <= 0:
        return []
    session_id, prefix = query.session_id, _prefix(query.session_id)
    match = " OR ".join(f'"{prefix}{q.term}"' for q in wanted)
    bound = 2**62 if query.before is None else query.before
    candidates = _candidates(db, session_id, match, query.episode_id, bound)
    if query.previous is None:
        return rank(wanted, candidates, df, docs, query.limit)
    previous = _candidates(db, session_id, match, query.previous, 2**62)
    return rank_with_previous(wanted, candidates, previous, df, docs, query.limit)


def _candidates(
    db: sqlite3.Connection, session_id: int, match: str, episode_id: int, before: int
) -> list[Candidate]:
    """The episode's best `CANDIDATES` matches of `match` with `id < before`."""
    if before <= 0:
        return []
    rows = db.execute(
        f"SELECT f.rowid, f.body, x.episode_id, x.user_text, x.reply_text, x.created_at"
        f" FROM {table(session_id)} f JOIN exchanges x ON x.id = f.rowid"
        f" WHERE {table(session_id)} MATCH ? AND f.rowid < ? AND x.episode_id = ?"
        " ORDER BY rank LIMIT ?",
        (match, before, episode_id, CANDIDATES),
    ).fetchall()
    return [_candidate(row, _prefix(session_id)) for row in rows]


def _candidate(row: Sequence[Any], prefix: str) -> Candidate:
    exchange = Exchange(
        int(row[0]),
        int(row[2]),
        row[3],
        row[4],
        True,
        None,
        datetime.fromisoformat(row[5]) if row[5] else None,
    )
    # Every term is written after a space (the first is the key's document mark), and
    # none holds one: dropping " k<id>_" where it starts a term leaves the bare terms.
    return Candidate(exchange, tuple((" " + row[1]).replace(" " + prefix, " ").split()[1:]))


def forget_session(db: sqlite3.Connection, session_id: int) -> int:
    """Delete the session's indexed text for real: its rows, then its shard merged into
    one segment so no older segment still holds the terms. Returns rows deleted."""
    name = table(session_id)
    cur = db.execute(
        f"DELETE FROM {name} WHERE rowid IN"
        " (SELECT id FROM exchanges WHERE session_id = ? AND signal = 1)",
        (session_id,),
    )
    db.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")
    return cur.rowcount


def forget_key(db: sqlite3.Connection, key: str) -> int:
    row = _first(db.execute("SELECT id FROM sessions WHERE key = ?", (key,)))
    return forget_session(db, int(row[0])) if row else 0


def size(db: sqlite3.Connection, key: str) -> tuple[int, int]:
    """(indexed exchanges of `key`, bytes of all recall tables) — for `inspect`."""
    row = _first(db.execute("SELECT id FROM sessions WHERE key = ?", (key,)))
    indexed = 0
    if row is not None:
        sid = int(row[0])
        got = _first(
            db.execute(f"SELECT doc FROM {_vocab(sid)} WHERE term = ?", (_prefix(sid) + "_n",))
        )
        indexed = int(got[0]) if got else 0
    pages = _first(db.execute("PRAGMA page_size"))[0]
    try:
        used = _first(db.execute("SELECT COUNT(*) FROM dbstat WHERE name LIKE 'recall_fts_%'"))[0]
    except sqlite3.OperationalError:  # dbstat not compiled in
        used = 0
    return indexed, int(used) * int(pages)


def rebuild(db: sqlite3.Connection, *, progress: bool | None = None) -> int:
    """(Re)build the whole index from the stored signal exchanges, in batches; a bar on
    stderr when it is large. Runs in the caller's transaction. Returns rows indexed."""
    for shard in range(SHARDS):
        db.execute(f"DELETE FROM recall_fts_{shard}")
    total = _first(db.execute("SELECT COUNT(*) FROM exchanges WHERE signal = 1"))[0]
    show = total >= PROGRESS_FROM if progress is None else progress
    done, last = 0, 0
    with _bar(total, show) as advance:
        while True:
            rows = db.execute(
                "SELECT id, session_id, user_text, reply_text FROM exchanges"
                " WHERE signal = 1 AND id > ? ORDER BY id LIMIT ?",
                (last, _BATCH),
            ).fetchall()
            if not rows:
                break
            for ex_id, sid, user, reply in rows:
                index_exchange(db, int(ex_id), int(sid), user, reply)
            last = int(rows[-1][0])
            done += len(rows)
            advance(len(rows))
    for shard in range(SHARDS):  # one segment per shard: a search reads one b-tree each
        db.execute(f"INSERT INTO recall_fts_{shard} (recall_fts_{shard}) VALUES ('optimize')")
    _restat(db)
    db.execute("UPDATE recall_meta SET built = 1")
    return done


def _restat(db: sqlite3.Connection) -> None:
    """Statistics of the shards' own tables refreshed, when the database has any: a
    `sqlite_stat1` taken while they were empty makes FTS5's internal range delete
    (`DELETE FROM …_data WHERE id >= ? AND id <= ?`, run at every merge) scan the whole
    shard, 20 ms a merge on a 1M-message database instead of microseconds."""
    if _first(db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")) is None:
        return
    for shard in range(SHARDS):
        db.execute(f"ANALYZE recall_fts_{shard}_data")
        db.execute(f"ANALYZE recall_fts_{shard}_idx")


def build_if_needed(db: sqlite3.Connection) -> int:
    """Backfill after the migration created the tables (existing databases)."""
    row = _first(db.execute("SELECT built FROM recall_meta"))
    if row is not None and int(row[0]):
        return 0
    return in_transaction(db, partial(rebuild, db))


class _bar:
    """A rich progress bar on stderr, or nothing."""

    def __init__(self, total: int, show: bool) -> None:
        self.total, self.show = total, show
        self._progress: Any = None

    def __enter__(self) -> Any:
        if not self.show:
            return lambda _n: None
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(console=Console(file=sys.stderr))
        self._progress.start()
        task = self._progress.add_task("recall index", total=self.total)
        return lambda n: self._progress.advance(task, n)

    def __exit__(self, *_exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
