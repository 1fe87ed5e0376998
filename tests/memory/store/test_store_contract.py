"""The store contract: every backend must pass this suite. It talks only to the ports
(`memory.store.Store`: `TurnStore`, `SummaryStore`, `EpisodeStore`, `OperatorQueries`,
`DeliveryInbox`, `ChatLocks`); SQLite specifics live in `test_sqlite.py`."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta

from memory.recall.port import RecallIndex, RecallQuery
from memory.recall.terms import query_terms
from memory.store import Store
from memory.store.episodes import NewEpisode
from memory.store.summaries import NewSummary
from memory.store.turns import NewExchange
from memory.types import Arrival, PreviousCase, TopicDecision

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


async def add(store: Store, key: str, n: int, *, noise_every: int = 0) -> list[int]:
    state = await store.turn_state(key, 1, T0)
    ids = []
    for i in range(n):
        is_noise = bool(noise_every) and i % noise_every == noise_every - 1
        ex = await store.record_exchange(
            NewExchange(
                state.session_id,
                state.episode.id,
                f"{key} user {i}",
                f"{key} reply {i}",
                not is_noise,
                "empty" if is_noise else None,
                T0 + timedelta(minutes=i),
            )
        )
        ids.append(ex.id)
    return ids


def summary(episode_id: int, base: int, checkpoint: int, text: str = "s") -> NewSummary:
    return NewSummary(
        episode_id, base, text, checkpoint, "fold-v1", "offline", 1, checkpoint, 10, 5, T0
    )


async def test_inbox_dedupes_by_external_id_per_key(store: Store) -> None:
    """The same external id is accepted once per key, and independently across keys."""
    first = await store.inbox_add("telegram:1", "u-1", "telegram:9", "text", "hola", T0)
    again = await store.inbox_add("telegram:1", "u-1", "telegram:9", "text", "hola", T0)
    other = await store.inbox_add("whatsapp:1", "u-1", "whatsapp:1", "text", "hola", T0)
    assert first is not None
    assert other is not None
    assert again is None


async def test_inbox_unfinished_until_done(store: Store) -> None:
    """Pending and answered entries are unfinished; done ones are not; replies survive."""
    a = await store.inbox_add("console:a", "1", "console:a", "text", "x", T0)
    b = await store.inbox_add("console:a", "2", "console:a", "text", "y", T0)
    assert a
    assert b
    await store.inbox_mark(a.id, "answered", ["reply a"], at=T0)
    await store.inbox_mark(b.id, "done", at=T0)
    unfinished = await store.inbox_unfinished()
    assert [(e.id, e.status, e.replies) for e in unfinished] == [(a.id, "answered", ("reply a",))]


async def test_inbox_prune_keeps_recent_done_entries(store: Store) -> None:
    """Only finished entries older than the cut-off are pruned."""
    a = await store.inbox_add("console:a", "1", "console:a", "text", "x", T0)
    assert a
    await store.inbox_mark(a.id, "done", at=T0)
    assert await store.inbox_prune(T0 - timedelta(days=1)) == 0
    assert await store.inbox_prune(T0 + timedelta(days=8)) == 1


async def test_inbox_prune_drops_old_rejected_entries_too(store: Store) -> None:
    """A rejected entry (malformed input, a queue over its cap) is finished: pruned with
    the done ones once older than the cut-off, so the inbox does not grow with them."""
    assert await store.inbox_reject("console:a", "bad-1", "malformed", T0)
    assert await store.inbox_prune(T0 - timedelta(days=1)) == 0
    assert await store.inbox_get("console:a", "bad-1") is not None
    assert await store.inbox_prune(T0 + timedelta(days=8)) == 1
    assert await store.inbox_get("console:a", "bad-1") is None


async def test_window_is_last_n_signal_and_pending_after_checkpoint(store: Store) -> None:
    """Window: last N signal exchanges; pending: signal ones between checkpoint and window."""
    ids = await add(store, "console:w", 10, noise_every=3)  # ids 3, 6, 9 (1-based) are noise
    signal = [i for k, i in enumerate(ids) if k % 3 != 2]
    state = await store.turn_state("console:w", 3, T0)
    assert [e.id for e in state.window] == signal[-3:]
    assert [e.id for e in state.pending] == signal[:-3]
    written = await store.write_summary(summary(state.episode.id, 0, signal[1]))
    assert written is not None
    assert written.version == 1
    state = await store.turn_state("console:w", 3, T0)
    assert [e.id for e in state.pending] == signal[2:-3]
    assert state.summary is not None
    assert state.summary.checkpoint == signal[1]


async def test_window_size_change_applies_at_once(store: Store) -> None:
    """A larger N shows more exchanges verbatim even when they are already folded."""
    ids = await add(store, "console:n", 8)
    state = await store.turn_state("console:n", 2, T0)
    await store.write_summary(summary(state.episode.id, 0, ids[5]))
    wide = await store.turn_state("console:n", 6, T0)
    assert [e.id for e in wide.window] == ids[2:]
    assert wide.pending == ()


async def test_write_summary_is_atomic_and_idempotent(store: Store) -> None:
    """A stale base version, or a checkpoint moving back, writes nothing."""
    ids = await add(store, "console:s", 6)
    state = await store.turn_state("console:s", 2, T0)
    ep = state.episode.id
    assert await store.write_summary(summary(ep, 0, ids[1], "v1")) is not None
    assert await store.write_summary(summary(ep, 0, ids[2], "dup")) is None
    assert await store.write_summary(summary(ep, 1, ids[0], "back")) is None
    v2 = await store.write_summary(summary(ep, 1, ids[3], "v2"))
    assert v2 is not None
    assert v2.version == 2
    assert v2.round == 2
    assert [s.text for s in await store.summaries(ep)] == ["v1", "v2"]


async def test_reset_hides_previous_episode(store: Store) -> None:
    """After start_episode the window and pending are empty; old rows stay stored."""
    await add(store, "console:e", 4)
    state = await store.turn_state("console:e", 3, T0)
    await store.start_episode(NewEpisode(state.session_id, "manual", T0))
    fresh = await store.turn_state("console:e", 3, T0)
    assert fresh.window == ()
    assert fresh.pending == ()
    assert fresh.summary is None
    assert fresh.episode.id != state.episode.id
    assert len(await store.all_exchanges("console:e")) == 4
    episodes = await store.episodes("console:e")
    assert episodes[0].closed_at is not None
    assert episodes[1].opened_by == "manual"


async def test_undo_restores_previous_episode(store: Store) -> None:
    """Undo reopens the previous episode and moves newer exchanges back into it."""
    ids = await add(store, "console:u", 3)
    state = await store.turn_state("console:u", 5, T0)
    await store.start_episode(NewEpisode(state.session_id, "auto:intent_changed", T0, {"x": 1}))
    later = await add(store, "console:u", 1)
    reopened = await store.undo_reset(state.session_id, T0, within_s=60)
    assert reopened is not None
    assert reopened.id == state.episode.id
    back = await store.turn_state("console:u", 5, T0)
    assert [e.id for e in back.window] == [*ids, *later]
    assert await store.undo_reset(state.session_id, T0, within_s=60) is None


async def test_an_automatic_reset_keeps_the_closed_case_until_undone(store: Store) -> None:
    """The case an automatic reset closed is stored with the episode it opened and read
    back by every read of it; undoing the reset drops it with that episode."""
    await add(store, "console:pc", 2)
    state = await store.turn_state("console:pc", 3, T0)
    case = PreviousCase(
        state.episode.id, (("id", "#4821"), ("ip", "10.0.0.5")), ("rout", "4821"), "¿Y bien?"
    )
    reset = NewEpisode(state.session_id, "auto:idle", T0, None, (("name", "Ana"),), case)
    opened = await store.start_episode(reset)
    assert opened.previous == case
    now = await store.turn_state("console:pc", 3, T0)
    peeked = await store.peek_state("console:pc", 3)
    assert now.episode.previous == case
    assert peeked is not None
    assert peeked.episode.previous == case
    first, second = await store.episodes("console:pc")
    assert (first.previous, second.previous) == (None, case)
    assert await store.undo_reset(state.session_id, T0 + timedelta(days=1), math.inf)
    back = await store.turn_state("console:pc", 3, T0)
    assert back.episode.id == state.episode.id
    assert back.episode.previous is None
    assert back.episode.reopened_at is not None


async def say(store: Store, key: str, texts: list[str]) -> list[int]:
    """Store `texts` as signal exchanges of the key's current episode; their ids."""
    state = await store.turn_state(key, 1, T0)
    ids = []
    for n, text in enumerate(texts):
        new = NewExchange(
            state.session_id, state.episode.id, text, "vale", True, None, T0 + timedelta(seconds=n)
        )
        ids.append((await store.record_exchange(new)).id)
    return ids


async def test_recall_searches_the_previous_episode_when_asked_its_hits_first(
    store: Store,
) -> None:
    """A query naming the episode a recent automatic reset closed finds its exchanges
    too, ranked before the current episode's (marked `previous`); without it, none."""
    assert isinstance(store, RecallIndex)
    key = "console:rp"
    filler = [f"consulta general número {n} sobre horario{n} y tienda{n}" for n in range(12)]
    old = await say(store, key, [*filler, "el ticket 48213 del router zyxel"])
    state = await store.turn_state(key, 1, T0)
    await store.start_episode(NewEpisode(state.session_id, "auto:intent_changed", T0))
    new = await say(store, key, [*filler, "vuelvo al ticket 48213", "otra cosa"])
    now = await store.turn_state(key, 1, T0)
    terms = query_terms("¿Qué pasa con el ticket 48213 y el router?")
    plain = RecallQuery(now.session_id, now.episode.id, terms, new[-1])
    both = RecallQuery(now.session_id, now.episode.id, terms, new[-1], 8, state.episode.id)
    assert [h.exchange.id for h in await store.recall(plain)] == [new[-2]]
    hits = await store.recall(both)
    assert [h.exchange.id for h in hits] == [old[-1], new[-2]]
    assert [h.previous for h in hits] == [True, False]
    nothing_current = RecallQuery(now.session_id, now.episode.id, terms, 0, 8, state.episode.id)
    assert [h.exchange.id for h in await store.recall(nothing_current)] == [old[-1]]


async def test_summary_refused_for_closed_episode(store: Store) -> None:
    """A fold finishing after a reset cannot write into the closed episode."""
    ids = await add(store, "console:z", 4)
    state = await store.turn_state("console:z", 1, T0)
    await store.start_episode(NewEpisode(state.session_id, "manual", T0))
    assert await store.write_summary(summary(state.episode.id, 0, ids[2])) is None


async def test_forget_erases_every_row_and_blocks_late_folds(store: Store) -> None:
    """Forget deletes sessions, episodes, exchanges, summaries and inbox rows of one key."""
    ids = await add(store, "telegram:7", 4)
    await add(store, "whatsapp:7", 2)
    await store.inbox_add("telegram:7", "x", "telegram:7", "text", "hola", T0)
    state = await store.turn_state("telegram:7", 1, T0)
    await store.write_summary(summary(state.episode.id, 0, ids[1]))
    assert await store.forget("telegram:7") >= 2
    assert await store.peek_state("telegram:7", 3) is None
    assert await store.all_exchanges("telegram:7") == []
    assert await store.write_summary(summary(state.episode.id, 1, ids[2])) is None
    assert len(await store.all_exchanges("whatsapp:7")) == 2
    assert (await store.export("telegram:7"))["inbox"] == []


async def test_keys_never_mix(store: Store) -> None:
    """telegram:5 and whatsapp:5 are different conversations."""
    await add(store, "telegram:5", 2)
    await add(store, "whatsapp:5", 3)
    tg = await store.turn_state("telegram:5", 10, T0)
    wa = await store.turn_state("whatsapp:5", 10, T0)
    assert all("telegram:5" in e.user_text for e in tg.window)
    assert all("whatsapp:5" in e.user_text for e in wa.window)


async def test_topic_decision_stored_with_the_turn(store: Store) -> None:
    """The topic decision and its signals are stored with the exchange."""
    state = await store.turn_state("console:t", 1, T0)
    await store.record_exchange(
        NewExchange(
            state.session_id,
            state.episode.id,
            "u",
            "r",
            True,
            None,
            T0,
            topic=TopicDecision("continue", "same_case", {"overlap": 0.5}),
        )
    )
    exported = await store.export("console:t")
    rows = exported["exchanges"]
    assert isinstance(rows, list)
    assert '"overlap": 0.5' in rows[0]["topic"]


async def test_sessions_listing_counts(store: Store) -> None:
    """Sessions report exchanges, noise, episodes and summary versions."""
    await add(store, "console:l", 6, noise_every=3)
    (info,) = await store.sessions()
    assert (info.key, info.exchanges, info.noise, info.episodes) == ("console:l", 6, 2, 1)


async def test_intake_state_is_the_stored_state(store: Store) -> None:
    """The turn state `begin_turn` returns (built without reading for a new chat, read
    for a known one) is exactly what `peek_state` reads afterwards."""
    first = await store.begin_turn(
        Arrival("telegram:41", "m1", "telegram:41", "text", "hola", T0), 6
    )
    assert first.entry is not None
    assert first.state == await store.peek_state("telegram:41", 6)
    await add(store, "telegram:41", 3)
    later = await store.begin_turn(
        Arrival("telegram:41", "m2", "telegram:41", "text", "otra", T0), 2
    )
    assert later.state is not None
    assert len(later.state.window) == 2
    assert later.state == await store.peek_state("telegram:41", 2)
    again = await store.begin_turn(
        Arrival("telegram:41", "m2", "telegram:41", "text", "otra", T0), 2
    )
    assert again.entry is None
    assert again.state is None


async def test_begin_turn_stores_nothing_for_a_key_in_debug_mode(store: Store) -> None:
    """A key in debug mode is a dry run: `begin_turn` writes no inbox entry, while
    `inbox_add` (a command) still stores its message."""
    await store.set_debug("telegram:42", True, T0, "telegram:42")
    dry = await store.begin_turn(
        Arrival("telegram:42", "m1", "telegram:42", "text", "hola", T0), 6
    )
    assert (dry.entry, dry.debug) == (None, True)
    assert await store.inbox_get("telegram:42", "m1") is None
    assert await store.inbox_add("telegram:42", "m2", "telegram:42", "text", "/debug", T0)


async def test_debug_is_per_operator_within_a_key(store: Store) -> None:
    """In a shared key, debug is the operator's alone: another member's message is stored
    as usual; the state names who has debug on; switching off removes only that one."""
    group = "telegram:-100"
    await store.set_debug(group, True, T0, "telegram:1")
    member = await store.begin_turn(Arrival(group, "m1", "telegram:43", "text", "hola", T0), 6)
    assert member.entry is not None
    assert not member.debug
    assert member.state is not None
    assert member.state.debug_users == {"telegram:1"}
    assert not member.state.debug_for("telegram:43")
    await store.set_debug(group, True, T0, "telegram:2")
    await store.set_debug(group, False, T0, "telegram:1")
    state = await store.peek_state(group, 6)
    assert state is not None
    assert state.debug_users == {"telegram:2"}
    again = await store.begin_turn(Arrival(group, "m2", "telegram:1", "text", "otra", T0), 6)
    assert again.entry is not None


async def test_erased_is_true_once_nothing_is_left(store: Store) -> None:
    """With no reader in the way, a forget is erased for real as soon as it returns."""
    await add(store, "telegram:44", 3)
    assert await store.forget("telegram:44") >= 1
    assert await store.erased()


async def test_peek_for_fold_is_the_state_and_the_opening(store: Store) -> None:
    """What a fold reads equals `peek_state` plus the episode's first signal exchanges
    (noise skipped); with nothing pending, or an unknown key, there is nothing to fold."""
    assert await store.peek_for_fold("telegram:43", 2, 3) is None
    await add(store, "telegram:43", 7, noise_every=2)
    peeked = await store.peek_for_fold("telegram:43", 2, 3)
    assert peeked is not None
    state, opening = peeked
    assert state == await store.peek_state("telegram:43", 2)
    assert [e.user_text for e in opening] == [f"telegram:43 user {i}" for i in (0, 2, 4)]
    # 7 exchanges, every other one noise: 4 signal, 2 in the window, 2 pending.
    assert len(state.pending) == 2
    nothing_pending = await store.peek_for_fold("telegram:43", 4, 3)
    assert nothing_pending == (await store.peek_state("telegram:43", 4), [])


async def test_concurrent_writes_fail_alone(store: Store) -> None:
    """Writes issued at once all land, and one that fails (an exchange for an episode
    that does not exist) raises to its own caller only."""
    state = await store.turn_state("console:g", 2, T0)

    def exchange(episode_id: int, i: int) -> NewExchange:
        return NewExchange(state.session_id, episode_id, f"u{i}", f"r{i}", True, None, T0)

    writes = [store.record_exchange(exchange(state.episode.id, i)) for i in range(20)]
    writes.insert(10, store.record_exchange(exchange(999_999, 99)))
    results = await asyncio.gather(*writes, return_exceptions=True)
    assert isinstance(results[10], Exception)
    assert not [r for i, r in enumerate(results) if i != 10 and isinstance(r, BaseException)]
    stored = await store.all_exchanges("console:g")
    # the order of writes issued at once is not part of the port (a pool runs them side
    # by side); a chat's turns are ordered by its queue and `claim_turn`
    assert sorted(e.user_text for e in stored) == sorted(f"u{i}" for i in range(20))


async def test_a_delivered_entry_reads_done_at_once_and_stays_done(store: Store) -> None:
    """`inbox_delivered` returns without waiting; the entry reads as done from then on
    (not unfinished, so neither recovery nor a redelivery answers it again), and
    `inbox_settled` waits until that is durable."""
    a = await store.inbox_add("telegram:44", "m1", "u", "text", "hola", T0)
    b = await store.inbox_add("telegram:44", "m2", "u", "text", "otra", T0)
    assert a is not None
    assert b is not None
    await store.inbox_mark(a.id, "answered", ["hola!"], at=T0)
    store.inbox_delivered(a.id, at=T0)
    got = await store.inbox_get("telegram:44", "m1")
    assert got is not None
    assert got.status == "done"
    assert [e.external_id for e in await store.inbox_unfinished()] == ["m2"]
    await store.inbox_settled()
    assert [e.external_id for e in await store.inbox_unfinished()] == ["m2"]
