"""One chat at a time across workers: a session-level advisory lock per key, held only
while that chat's turn runs, and the chat's claim read under it.

A worker's chat locks live on a few dedicated connections (a PostgreSQL session can
hold many advisory locks; a key always maps to the same one), so a turn waiting seconds
for its model holds no pooled connection and cross-chat concurrency is not capped by
the pool size. Each connection is a *lane* that batches: every lock, claim and unlock
asked while its previous round trip was out goes in the next one, as one call of a
server function (`sql.LANE_FUNCTION`: delivered entries' done marks; unlocks;
`pg_try_advisory_lock` over the keys; the claims of the keys just locked, each read in a
snapshot taken after the locks so it sees every earlier holder's commits). A done mark asked just
before its chat's unlock rides the unlock's round trip, as SQLite's rides the next
write. A thousand chats starting at once cost a handful of round trips, not three
thousand. Acquiring is non-blocking (a blocking lock would stall the lane for every
other chat); a chat another worker holds is asked again on a short backoff (1 ms
doubling to 20 ms), riding the lane's batches.

The batch runs in the lane's own task, so a caller cancelled mid-request never leaves a
lock behind: a lock granted to a caller that has gone is released in the next batch. A
worker that dies (even `kill -9`) closes its connections and the server releases its
locks at once; nothing is kept per chat once its turn ends (invariant 8).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
import structlog
from psycopg.rows import dict_row

from memory.store.locks import Claim
from memory.store.postgres import sql
from memory.store.postgres.connection import PREPARE_THRESHOLD
from memory.store.postgres.rows import Row, inbox_row
from memory.store.states import IntakeStates
from memory.types import InboxEntry, TurnState

log = structlog.get_logger(__name__)

# The advisory lock class id of chat locks (migrations use the single-key form).
CHAT_LOCK_CLASS = 0x63686174  # "chat"
_FIRST_WAIT_S = 0.001
_MAX_WAIT_S = 0.02
CONNECTIONS = 2  # per worker, besides the pool
Conn = psycopg.AsyncConnection[Any]


@dataclass(frozen=True, slots=True)
class ClaimAsk:
    """The claim read with a lock: the key's entries up to `upto` (see `sql.LANE_FUNCTION`)."""

    upto: int
    resend: bool


@dataclass(frozen=True, slots=True)
class Stamped:
    """The state an intake read (`states.begin()` was `since`), with its stamp."""

    stamp: str
    since: int
    window: int
    state: TurnState


@dataclass(slots=True)
class _Lock:
    key: str
    claim: ClaimAsk | None
    done: asyncio.Future[tuple[bool, list[Row]]]


@dataclass(slots=True)
class _Unlock:
    key: str
    done: asyncio.Future[bool]


@dataclass(slots=True)
class _Mark:
    entry_id: int
    at: datetime
    done: asyncio.Future[None]


@dataclass
class _Lane:
    """One lock connection and what waits for its next round trip."""

    conninfo: str
    conn: Conn | None = None
    locks: list[_Lock] = field(default_factory=list)
    unlocks: list[_Unlock] = field(default_factory=list)
    marks: list[_Mark] = field(default_factory=list)
    runner: asyncio.Task[None] | None = None

    async def connection(self) -> Conn:
        if self.conn is None or self.conn.closed:
            self.conn = await psycopg.AsyncConnection.connect(
                self.conninfo,
                autocommit=True,
                row_factory=dict_row,
                prepare_threshold=PREPARE_THRESHOLD,
                application_name="ventana-locks",
            )
        return self.conn

    def give_back(self, key: str) -> None:
        """Release a lock nobody holds any more (its caller was cancelled)."""
        self.unlocks.append(_Unlock(key, asyncio.get_running_loop().create_future()))
        self.wake()

    def wake(self) -> None:
        if self.runner is None or self.runner.done():
            self.runner = asyncio.get_running_loop().create_task(self._run(), name="chat-locks")

    async def _run(self) -> None:
        # One turn of the loop first: what else is asked in the tick that woke the lane
        # joins this batch (a turn's done mark, then its chat's unlock from a task of its
        # own, are asked in one tick).
        await asyncio.sleep(0)
        while self.locks or self.unlocks or self.marks:
            locks, unlocks, marks = self.locks, self.unlocks, self.marks
            self.locks, self.unlocks, self.marks = [], [], []
            await self._batch(locks, unlocks, marks)

    async def _batch(self, locks: list[_Lock], unlocks: list[_Unlock], marks: list[_Mark]) -> None:
        try:
            try:
                got, claimed, released = await self._round_trip(locks, unlocks, marks)
            except psycopg.OperationalError:
                # The connection broke: the server dropped every lock it held. Reconnect
                # once; an unlock is then already done (False: the lock was lost); a done
                # mark is idempotent and goes again.
                if self.conn is not None:
                    await self.conn.close()
                got, claimed, _ = await self._round_trip(locks, [], marks)
                released = [False] * len(unlocks)
        except BaseException as exc:  # every caller of the batch hears of it
            waiting: list[asyncio.Future[Any]] = [u.done for u in unlocks]
            waiting += [m.done for m in marks]
            for done in [*waiting, *(lock.done for lock in locks)]:
                if not done.done():
                    done.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for mark in marks:
            if not mark.done.done():
                mark.done.set_result(None)
        for unlock, ok in zip(unlocks, released, strict=True):
            if not unlock.done.done():
                unlock.done.set_result(ok)
        for n, lock in enumerate(locks):
            if lock.done.done():  # its caller was cancelled: give the lock back
                if got[n]:
                    self.give_back(lock.key)
                continue
            lock.done.set_result((got[n], claimed.get(n, [])))

    async def _round_trip(
        self, locks: Sequence[_Lock], unlocks: Sequence[_Unlock], marks: Sequence[_Mark]
    ) -> tuple[list[bool], dict[int, list[Row]], list[bool]]:
        conn = await self.connection()
        asks = [(n, lock.claim) for n, lock in enumerate(locks) if lock.claim is not None]
        params: dict[str, Any] = {
            "class": CHAT_LOCK_CLASS,
            "marked": [m.entry_id for m in marks],
            "marked_at": [m.at for m in marks],
            "unlock": [u.key for u in unlocks],
            "lock": [lock.key for lock in locks],
            "claim_n": [n for n, _ in asks],
            "claim_upto": [c.upto for _, c in asks],
            "claim_resend": [c.resend for _, c in asks],
        }
        cur = await conn.execute(sql.LANE, params)
        released, got = [False] * len(unlocks), [False] * len(locks)
        claimed: dict[int, list[Row]] = {}
        for row in await cur.fetchall():
            part, n = row["part"], int(row["n"])
            if part == "u":
                released[n] = bool(row["ok"])
            elif part == "l":
                got[n] = bool(row["ok"])
            else:
                claimed.setdefault(n, []).append(row)
        return got, claimed, released

    async def close(self) -> None:
        if self.runner is not None:
            await asyncio.gather(self.runner, return_exceptions=True)
        if self.conn is not None:
            await self.conn.close()


class PostgresChatLocks:
    """Open with `await PostgresChatLocks.open(conninfo)`."""

    def __init__(self, conninfo: str, connections: int = CONNECTIONS) -> None:
        self._lanes = [_Lane(conninfo) for _ in range(connections)]
        self.held = 0  # locks held by this worker right now (doctor, tests)
        self.waits = 0  # acquisitions that had to wait for another worker

    @classmethod
    async def open(cls, conninfo: str, connections: int = CONNECTIONS) -> PostgresChatLocks:
        locks = cls(conninfo, connections)
        try:
            for lane in locks._lanes:
                await lane.connection()
        except BaseException:
            await locks.close()
            raise
        return locks

    def _lane(self, key: str) -> _Lane:
        return self._lanes[zlib.crc32(key.encode()) % len(self._lanes)]

    async def _try(self, key: str, claim: ClaimAsk | None) -> tuple[bool, list[Row]]:
        lane = self._lane(key)
        done: asyncio.Future[tuple[bool, list[Row]]] = asyncio.get_running_loop().create_future()
        lane.locks.append(_Lock(key, claim, done))
        lane.wake()
        try:
            return await done
        except asyncio.CancelledError:
            # Granted just as the caller was cancelled: nobody will hold it, release it.
            granted = done.done() and not done.cancelled() and done.exception() is None
            if granted and done.result()[0]:
                lane.give_back(key)
            raise

    def mark_done(self, key: str | None, entry_id: int, at: datetime) -> asyncio.Future[None]:
        """Mark a delivered inbox entry done in the next batch of `key`'s lane (any lane
        without a key): asked before the chat's unlock, it rides the unlock's round trip."""
        lane = self._lane(key) if key is not None else self._lanes[entry_id % len(self._lanes)]
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        lane.marks.append(_Mark(entry_id, at, done))
        lane.wake()
        return done

    async def _unlock(self, key: str) -> bool:
        lane = self._lane(key)
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        lane.unlocks.append(_Unlock(key, done))
        lane.wake()
        return await done

    @asynccontextmanager
    async def hold(self, key: str, claim: ClaimAsk | None = None) -> AsyncIterator[list[Row]]:
        """Wait until no other worker runs a turn of `key`, and hold it until exit;
        yields the rows of `claim`, read once the lock is held."""
        wait = _FIRST_WAIT_S
        got, rows = await self._try(key, claim)
        while not got:
            if wait == _FIRST_WAIT_S:
                self.waits += 1
            await asyncio.sleep(wait)
            wait = min(wait * 2, _MAX_WAIT_S)
            got, rows = await self._try(key, claim)
        self.held += 1
        try:
            yield rows
        finally:
            self.held -= 1
            # Shielded: a cancelled turn must still release its chat for other workers.
            if not await asyncio.shield(self._unlock(key)):
                log.warning("chat_lock_lost", key=key)

    async def close(self) -> None:
        for lane in self._lanes:
            await lane.close()


class PostgresClaims:
    """`ChatLocks` on PostgreSQL: the part of `PostgresStore` a turn holds its chat with.
    `stamps` are the turns part's (the state read with each intake, and its stamp): an
    exclusive claim hands that state on to the turn (`states`), another voids it."""

    def __init__(
        self, locks: PostgresChatLocks, stamps: dict[int, Stamped], states: IntakeStates
    ) -> None:
        self.locks = locks
        self.stamps = stamps
        self.states = states
        self.claimed: dict[int, str] = {}  # entry id → key, while its chat is held here

    @asynccontextmanager
    async def claim_turn(self, entry: InboxEntry) -> AsyncIterator[Claim]:
        """Hold the chat against every other worker (a per-chat advisory lock) and yield
        its pending entries up to `entry`, oldest first; `entry` itself also when it is
        answered and being resent. One another worker ran is not among them. The claim is
        `exclusive` (the state read with the intake still holds) when it is `entry` alone
        and the chat's stamp has not changed since the intake."""
        # The claim is read in the lock's round trip, after the lock is taken: its
        # snapshot sees every earlier holder's commits (READ COMMITTED), so an entry run
        # elsewhere is never run again.
        claim = ClaimAsk(entry.id, resend=entry.status == "answered")
        read = self.stamps.pop(entry.id, None)
        async with self.locks.hold(entry.key, claim) as rows:
            claimed = tuple(inbox_row(r) for r in rows)
            alone = [e.id for e in claimed] == [entry.id]
            current = alone and read is not None and rows[0]["c_stamp"] == read.stamp
            if current and read is not None:
                self.states.keep(read.since, read.window, read.state)
            else:  # another worker wrote the chat, or an earlier entry runs first
                self.states.void_key(entry.key)
            for each in claimed:
                self.claimed[each.id] = entry.key
            try:
                yield Claim(claimed, exclusive=current)
            finally:
                for each in claimed:
                    self.claimed.pop(each.id, None)
