"""Provider-reported usage of every chat call and fold, in PostgreSQL: the `UsageQueries`
port, as `sqlite/usage.py` is for SQLite.

Rows are written by the statement that stores the exchange (`sql.RECORD_EXCHANGE`) or
the summary version (`sql.SUMMARY_INSERT`), so usage and what it paid for commit
together. They hang off the session, so forget erases them with it; a fold's row goes
with its summary version (an undo drops both). `exchange_id` names the exchange without
a foreign key: exchanges are only ever deleted with their session, which takes the row
too, and a key would cost an index and a check on every turn.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory.store.usage import UsageTotal

USAGE_TABLE = """
CREATE TABLE usage (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    exchange_id BIGINT,
    summary_id BIGINT REFERENCES summaries(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX usage_by_session ON usage(session_id, created_at);
CREATE INDEX usage_by_time ON usage(created_at);
CREATE INDEX usage_by_summary ON usage(summary_id) WHERE summary_id IS NOT NULL;
"""

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


class PostgresUsageQueries:
    """Mixed into `PostgresStore`, which provides `_all`."""

    if TYPE_CHECKING:

        async def _all(self, query: str, params: Any) -> list[dict[str, Any]]: ...

    async def usage_totals(
        self, key: str | None = None, since: datetime | None = None
    ) -> list[UsageTotal]:
        """Calls and tokens per key, purpose and model, oldest key first; `since` inclusive."""
        rows = await self._all(TOTALS, {"key": key, "since": since})
        return [UsageTotal.of_row(row, lambda at: at) for row in rows]
