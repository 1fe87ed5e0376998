"""`SummaryStore` on PostgreSQL: the part of `PostgresStore` folds go through. Folds
on several workers race through `write_summary`'s compare-and-set on the episode's row
lock and `UNIQUE (episode_id, version)`."""

from __future__ import annotations

import json

import psycopg

from memory.store.postgres import sql
from memory.store.postgres.connection import PostgresDatabase
from memory.store.postgres.turns import peek_state, signal_exchanges
from memory.store.states import IntakeStates
from memory.store.summaries import NewSummary
from memory.types import Exchange, SummaryVersion, TurnState


class PostgresSummaries:
    """The fold's part of `PostgresStore`."""

    def __init__(self, db: PostgresDatabase, states: IntakeStates) -> None:
        self.db = db
        self.states = states

    async def peek_for_fold(
        self, key: str, window: int, opening: int, *, due: int = 1
    ) -> tuple[TurnState, list[Exchange]] | None:
        """`peek_state` and the first `opening` signal exchanges of the current episode;
        with fewer than `due` pending the opening is not read (it comes back empty)."""
        async with self.db.connection() as conn:
            state = await peek_state(conn, key, window)
            if state is None:
                return None
            if len(state.pending) < max(due, 1):
                return state, []
            return state, await signal_exchanges(conn, state.episode.id, 0, limit=opening)

    async def signal_exchanges(
        self, episode_id: int, after: int, upto: int | None = None, limit: int | None = None
    ) -> list[Exchange]:
        async with self.db.connection() as conn:
            return await signal_exchanges(conn, episode_id, after, upto, limit)

    async def write_summary(self, new: NewSummary) -> SummaryVersion | None:
        """Write version base+1 with its checkpoint atomically, or nothing when stale:
        another fold (on any worker) won, the episode was reset or forgotten, or the
        checkpoint would move back. The open episode's row is locked first, so folds,
        resets and forgets of one episode take turns."""
        try:
            try:
                async with self.db.transaction() as conn:
                    cur = await conn.execute(sql.EPISODE_OPEN_LOCK, (new.episode_id,))
                    if await cur.fetchone() is None:
                        return None
                    cur = await conn.execute(sql.SUMMARY_LATEST, (new.episode_id,))
                    latest = await cur.fetchone()
                    assert latest is not None
                    if (
                        latest["latest"] != new.base_version
                        or new.checkpoint < latest["checkpoint"]
                    ):
                        return None
                    version, rounds = new.base_version + 1, int(latest["rounds"]) + 1
                    cur = await conn.execute(
                        sql.SUMMARY_INSERT,
                        {
                            "episode": new.episode_id, "version": version, "text": new.text,
                            "checkpoint": new.checkpoint, "prompt_version": new.prompt_version,
                            "model": new.model, "source_from": new.source_from,
                            "source_to": new.source_to, "input_tokens": new.input_tokens,
                            "output_tokens": new.output_tokens, "round": rounds,
                            "at": new.created_at,
                            "dropped": json.dumps(list(new.dropped_facts), ensure_ascii=False),
                        },
                    )  # fmt: skip
                    row = await cur.fetchone()
                    assert row is not None
            except psycopg.errors.UniqueViolation:  # a concurrent fold wrote this version
                return None
            return SummaryVersion(
                int(row["id"]), new.episode_id, version, new.text, new.checkpoint,
                new.prompt_version, new.model, new.source_from, new.source_to,
                new.input_tokens, new.output_tokens, rounds, new.created_at,
            )  # fmt: skip
        finally:
            self.states.void_episode(new.episode_id)
