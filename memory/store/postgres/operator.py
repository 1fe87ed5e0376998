"""`OperatorQueries` and `UsageQueries` on PostgreSQL: listings, export, usage totals,
what doctor shows. Not on a turn's path."""

from __future__ import annotations

from datetime import datetime

from psycopg.conninfo import conninfo_to_dict

from memory.store.operator import SessionInfo
from memory.store.postgres import sql
from memory.store.postgres.connection import PostgresDatabase
from memory.store.postgres.locks import PostgresChatLocks
from memory.store.postgres.rows import episode_row, exchange_row, plain, summary_row
from memory.store.usage import UsageTotal
from memory.types import Episode, Exchange, SummaryVersion

TOTALS = """
SELECT s.key AS key, u.purpose AS purpose, u.model AS model, count(*) AS calls,
       sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.cached_tokens) AS cached_tokens, min(u.created_at) AS first_at,
       max(u.created_at) AS last_at
FROM usage u JOIN sessions s ON s.id = u.session_id
WHERE (%(key)s::text IS NULL OR s.key = %(key)s)
  AND (%(since)s::timestamptz IS NULL OR u.created_at >= %(since)s)
GROUP BY s.key, u.purpose, u.model
ORDER BY s.key, u.purpose, u.model
"""


class PostgresOperatorQueries:
    """The operators' part of `PostgresStore`."""

    def __init__(self, db: PostgresDatabase, locks: PostgresChatLocks, url: str) -> None:
        self.db = db
        self.locks = locks
        self._where = where(url)

    async def describe(self) -> str:
        migrations = await self.applied_migrations()
        pool = self.pool_state()
        return (
            f"postgresql {await self.server_version()} {self._where} ({len(migrations)}"
            f" migrations, pool {pool['size']}/{pool['max']} open, {pool['idle']} idle,"
            f" {pool['waiting']} waiting)"
        )

    async def ping(self) -> bool:
        async with self.db.connection() as conn:
            cur = await conn.execute("SELECT 1 AS one")
            return (await cur.fetchone()) is not None

    async def server_version(self) -> str:
        async with self.db.connection() as conn:
            cur = await conn.execute("SHOW server_version")
            row = await cur.fetchone()
        return str(row["server_version"]) if row else "unknown"

    def pool_state(self) -> dict[str, int]:
        """Pool size, idle connections, waiting requests, chat locks held (doctor)."""
        stats = self.db.pool.get_stats()
        return {
            "size": stats.get("pool_size", 0),
            "max": self.db.pool.max_size,
            "idle": stats.get("pool_available", 0),
            "waiting": stats.get("requests_waiting", 0),
            "chat_locks": self.locks.held,
        }

    async def applied_migrations(self) -> list[str]:
        return [
            r["name"]
            for r in await self.db.all("SELECT name FROM schema_migrations ORDER BY version", ())
        ]

    async def episodes(self, key: str) -> list[Episode]:
        return [episode_row(r) for r in await self.db.all(sql.EPISODES_OF_KEY, (key,))]

    async def all_exchanges(self, key: str) -> list[Exchange]:
        """Every exchange of a key, noise included (operators and export only)."""
        return [exchange_row(r) for r in await self.db.all(sql.EXCHANGES_OF_KEY, (key,))]

    async def sessions(self) -> list[SessionInfo]:
        return [
            SessionInfo(
                r["key"],
                r["created_at"],
                r["last_activity_at"],
                int(r["exchanges"]),
                int(r["noise"]),
                int(r["episodes"]),
                int(r["summary_versions"]),
                bool(r["debug"]),
            )
            for r in await self.db.all(sql.SESSIONS, ())
        ]

    async def export(self, key: str) -> dict[str, object]:
        """Every stored row of `key`, as plain JSON-able data (the right of access)."""
        out: dict[str, object] = {"key": key}
        for name, query in sql.EXPORT.items():
            rows = [plain(r) for r in await self.db.all(query, (key,))]
            out[name] = (rows[0] if rows else []) if name == "session" else rows
        return out

    async def summaries(self, episode_id: int) -> list[SummaryVersion]:
        return [summary_row(r) for r in await self.db.all(sql.SUMMARIES, (episode_id,))]

    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        """Calls and tokens per key, purpose and model, oldest key first; `since` inclusive."""
        rows = await self.db.all(TOTALS, {"key": key, "since": since})
        return [UsageTotal.of_row(row, lambda at: at) for row in rows]


def where(url: str) -> str:
    """`host/dbname` of a connection URL, without its user or password."""
    parts = conninfo_to_dict(url)
    return f"{parts.get('host') or 'localhost'}/{parts.get('dbname') or ''}"
