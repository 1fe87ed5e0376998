"""`kill -9` the bot at random moments under load: nothing acknowledged is lost or doubled.

The bot runs as a real process (`python -m bot run`) against a fake Bot API and a fake
OpenAI-compatible model on loopback. A seeded RNG decides the load and when each SIGKILL
lands (during start-up and recovery, or while polling, calling the model, recording and
delivering). Runs alternate between `VENTANA_DB_SYNC=normal` and `full`, so both
durability modes (and a restart that switches between them) are killed alike.
`VENTANA_SOAK_KILLS` raises the number of kills (`make soak`: 200).
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.bot_api import TOKEN, FakeBotAPI
from tests.support.processes.db_checks import check_store, inbox_statuses, summary_versions
from tests.support.processes.model_api import FakeModel
from tests.support.processes.process import bot_env, reaped, sigkill, spawn, tail

KILLS = int(os.environ.get("VENTANA_SOAK_KILLS") or 10)
SEED = int(os.environ.get("VENTANA_CRASH_SEED") or 20250607)
CHATS = tuple(range(101, 101 + max(4, KILLS // 20)))  # summaries stay small in a soak
START_S = 30.0  # a bot that does not poll within this has failed to start
DRAIN_S = 60.0  # the last run must answer everything within this
SYNCS = ("normal", "full")  # generation by generation
STEP_S = 0.05
EARLY_KILL_SHARE = 0.2  # kills aimed at start-up and inbox recovery
BAD_LOG_EVENTS = (
    "job_failed",
    "turn_failed",
    "fold_crashed",
    "telegram_update_unreadable",
    "Traceback",
)


@dataclass
class Rig:
    tmp: Path
    telegram: FakeBotAPI
    model: FakeModel
    rng: random.Random

    @property
    def db(self) -> Path:
        return self.tmp / "ventana.db"

    def log(self, generation: int) -> Path:
        return self.tmp / f"bot-{generation}.log"

    def start(self, generation: int) -> subprocess.Popen[bytes]:
        env = bot_env(
            self.tmp,
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_BASE_URL=self.telegram.base_url(generation),
            VENTANA_HTTP_PORT=str(_free_port()),  # /healthz is served while polling too
            VENTANA_CHAT_MODEL="openai:fake",
            VENTANA_SUMMARY_MODEL="openai:fake",
            OPENAI_BASE_URL=self.model.base_url,
            VENTANA_DB=str(self.db),
            VENTANA_DB_SYNC=SYNCS[generation % len(SYNCS)],
            VENTANA_WINDOW_EXCHANGES="2",
            VENTANA_FOLD_BATCH="2",
            VENTANA_TOPIC_DETECTION="off",
            VENTANA_LANGUAGE="es",
            VENTANA_LOG_LEVEL="warning",
            VENTANA_LOG_FORMAT="json",
        )
        return spawn(["run"], env, self.tmp, self.log(generation))

    def push(self, count: int = 1) -> None:
        for _ in range(count):
            self.telegram.push_text(self.rng.choice(CHATS))

    def run_for(self, seconds: float, proc: subprocess.Popen[bytes], generation: int) -> None:
        """Let the bot work, pushing a message now and then; it must stay alive."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.rng.random() < 0.3:
                self.push()
            time.sleep(STEP_S)
            assert proc.poll() is None, f"bot exited by itself:\n{tail(self.log(generation))}"

    def wait(self, what: str, done: Callable[[], bool], limit: float, generation: int) -> None:
        end = time.monotonic() + limit
        while not done():
            assert time.monotonic() < end, (
                f"timed out waiting for {what}:\n{tail(self.log(generation))}"
            )
            time.sleep(STEP_S)


@dataclass
class Tally:
    kills: int = 0
    early: int = 0
    during_model_call: int = 0
    checks: int = 0


def test_sigkill_under_load_loses_and_doubles_nothing(tmp_path: Path) -> None:
    """Every confirmed update is stored once, answered, and the checkpoint stays behind."""
    rng = random.Random(SEED)
    telegram, model = FakeBotAPI(), FakeModel(seed=SEED)
    tally = Tally()
    started = time.monotonic()
    with telegram.server, model.server:
        rig = Rig(tmp_path, telegram, model, rng)
        for generation in range(KILLS):
            _one_killed_run(rig, generation, tally)
        final = KILLS
        with reaped(rig.start(final)) as proc:
            rig.push(rng.randint(2, 6))
            rig.wait("the first poll", lambda: telegram.poll_count(final) > 0, START_S, final)
            rig.wait("every update answered", lambda: _all_answered(telegram), DRAIN_S, final)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, tail(rig.log(final))
        _check_the_end(rig, final)
    assert tally.kills == KILLS
    print(
        f"\ncrash: {tally.kills} SIGKILLs ({tally.early} during start-up, "
        f"{tally.during_model_call} during a model call), {len(telegram.texts)} updates, "
        f"{summary_versions(rig.db)} summary versions, {model.folds} fold calls, "
        f"{time.monotonic() - started:.1f} s"
    )


def _one_killed_run(rig: Rig, generation: int, tally: Tally) -> None:
    proc = rig.start(generation)
    with reaped(proc):
        rig.push(rig.rng.randint(2, 6))
        if rig.rng.random() < EARLY_KILL_SHARE:
            time.sleep(rig.rng.uniform(0.5, 2.5))  # importing, migrating, recovering, polling
            tally.early += rig.telegram.poll_count(generation) == 0
        else:
            polled = lambda: rig.telegram.poll_count(generation) > 0  # noqa: E731
            rig.wait("the first poll", polled, START_S, generation)
            rig.run_for(rig.rng.uniform(0.05, 1.2), proc, generation)
        tally.during_model_call += rig.model.in_flight > 0
        sigkill(proc)
    tally.kills += 1
    _check_after_kill(rig, generation)
    tally.checks += 1


def _check_after_kill(rig: Rig, generation: int) -> None:
    confirmed, _ = rig.telegram.snapshot()
    assert not rig.telegram.unexpected, rig.telegram.unexpected
    assert not rig.model.unexpected, rig.model.unexpected
    _assert_clean_log(rig.log(generation))
    if not rig.db.exists():  # killed before the database was created
        assert not confirmed
        return
    check_store(rig.db, confirmed, rig.telegram.texts)


def _all_answered(telegram: FakeBotAPI) -> bool:
    confirmed, _ = telegram.snapshot()
    everything = set(telegram.texts)
    return confirmed == everything and all(telegram.replies_to(u) for u in everything)


def _check_the_end(rig: Rig, final: int) -> None:
    telegram = rig.telegram
    confirmed, sent = telegram.snapshot()
    assert confirmed == set(telegram.texts)
    counts = check_store(rig.db, confirmed, telegram.texts)
    assert counts["exchanges"] == len(confirmed)  # every update answered exactly once
    assert inbox_statuses(rig.db) == {"done": len(confirmed)}
    for update_id in sorted(confirmed):
        replies = telegram.replies_to(update_id)
        expected = f"Anotado u{update_id}: queda registrado, gracias."
        assert [r.text for r in replies] == [expected] * len(replies), update_id
        # A repeat only when a process died after sending and before marking it done:
        # then the next process re-sends the stored reply. Never twice from one process.
        per_process = Counter(r.generation for r in replies)
        assert max(per_process.values()) == 1, (update_id, per_process)
        assert final not in list(per_process)[:-1], (update_id, per_process)
    assert len(sent) >= len(confirmed)
    assert summary_versions(rig.db) > 0  # folds ran, so the checkpoint check had teeth
    assert not telegram.server.errors
    assert not rig.model.server.errors
    _assert_clean_log(rig.log(final))


def _assert_clean_log(path: Path) -> None:
    text = path.read_text("utf-8", "replace") if path.exists() else ""
    bad = [event for event in BAD_LOG_EVENTS if event in text]
    assert not bad, f"{bad} in {path.name}:\n{tail(path)}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
