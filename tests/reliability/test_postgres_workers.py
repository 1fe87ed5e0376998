"""Two `ventana run` workers on one PostgreSQL, WhatsApp webhooks spread over both (some
delivered to both), one worker killed with SIGKILL mid-load and restarted: every
message answered, each user message stored once, each chat in the order it was sent.

Real processes, a real server (`tests/support/postgres.py`), a fake Graph API and a fake
OpenAI-compatible model on loopback. A chat's next message is sent once the previous
one was acknowledged (200: it is durable), as Meta does; that defines its order.
"""

from __future__ import annotations

import json
import random
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from bot.channels.whatsapp.webhook import sign
from tests.support.postgres import PostgresServer, postgres_server
from tests.support.processes.loopback import LoopbackServer, Reply
from tests.support.processes.model_api import FakeModel
from tests.support.processes.process import bot_env, sigkill, spawn, tail

__all__ = ["postgres_server"]  # the session fixture

PHONE_ID = "1065403"
APP_SECRET = "appsecret-workers-test"
CHATS = tuple(range(5001, 5007))
PER_CHAT = 8
SEED = 20261201
DUPLICATE_SHARE = 0.3
_MARK = re.compile(r"\bu\d+\b")


@dataclass
class FakeGraph:
    """`POST /v21.0/<phone>/messages` on loopback; records (to, body) of each send."""

    sent: list[tuple[str, str]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server = LoopbackServer(self._route)

    def _route(self, verb: str, path: str, _params: dict[str, str], body: Any) -> Reply:
        with self._lock:
            if verb == "POST" and path == f"/v21.0/{PHONE_ID}/messages" and isinstance(body, dict):
                self.sent.append((str(body["to"]), str(body["text"]["body"])))
                return 200, {"messaging_product": "whatsapp", "messages": [{"id": "wamid.o"}]}, {}
            self.unexpected.append(f"{verb} {path}")
        return 404, {"error": {"code": 100, "message": "unexpected"}}, {}

    def answered(self) -> set[str]:
        with self._lock:
            return {m for _, text in self.sent for m in _MARK.findall(text)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _payload(chat: int, n: int) -> bytes:
    message = {
        "from": str(chat),
        "id": f"wamid.{chat}.{n}",
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": f"mensaje u{chat}{n:02d} de la prueba"},
    }
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": PHONE_ID},
        "contacts": [{"profile": {"name": "Ana"}, "wa_id": str(chat)}],
        "messages": [message],
    }
    entry = {"id": "1", "changes": [{"value": value, "field": "messages"}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


def _post(port: int, body: bytes) -> int:
    headers = {
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(APP_SECRET.encode(), body),
    }
    request = urllib.request.Request(f"http://127.0.0.1:{port}/whatsapp/webhook", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:  # the worker is down: the load balancer would try another
        return 0


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return int(r.status) == 200
    except OSError:
        return False


def _wait(what: str, done: Any, logs: list[Path], limit: float) -> None:
    end = time.monotonic() + limit
    while not done():
        if time.monotonic() > end:
            raise AssertionError(f"timed out: {what}\n" + "\n".join(tail(p) for p in logs))
        time.sleep(0.05)


@dataclass
class Workers:
    tmp: Path
    url: str
    graph: FakeGraph
    model: FakeModel
    ports: tuple[int, int] = field(default_factory=lambda: (_free_port(), _free_port()))
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: list[Path] = field(default_factory=list)

    def start(self, n: int) -> None:
        log = self.tmp / f"worker-{n}-{len(self.logs)}.log"
        self.logs.append(log)
        env = bot_env(
            self.tmp,
            VENTANA_DB=self.url,
            VENTANA_DB_POOL_SIZE="4",
            VENTANA_HTTP_PORT=str(self.ports[n]),
            VENTANA_CHAT_MODEL="openai:fake",
            VENTANA_SUMMARY_MODEL="openai:fake",
            OPENAI_API_KEY="sk-test-workers",
            OPENAI_BASE_URL=self.model.base_url,
            WHATSAPP_ACCESS_TOKEN="EAAG-workers-token",
            WHATSAPP_PHONE_NUMBER_ID=PHONE_ID,
            WHATSAPP_APP_SECRET=APP_SECRET,
            WHATSAPP_VERIFY_TOKEN="verify-workers",
            WHATSAPP_GRAPH_URL=f"http://127.0.0.1:{self.graph.server.port}/v21.0",
            VENTANA_WINDOW_EXCHANGES="2",
            VENTANA_FOLD_BATCH="2",
            VENTANA_TOPIC_DETECTION="off",
            VENTANA_LOG_FORMAT="json",
            VENTANA_LOG_LEVEL="warning",
        )
        self.procs[n] = spawn(["run"], env, self.tmp, log)
        _wait(f"worker {n} healthy", lambda: _healthy(self.ports[n]), self.logs, 30)

    def deliver(self, chat: int, n: int, rng: random.Random) -> None:
        """To one live worker (and sometimes to the other too), until acknowledged."""
        body = _payload(chat, n)
        order = list(self.ports)
        rng.shuffle(order)
        end = time.monotonic() + 20
        while _post(order[0], body) != 200:
            order.reverse()  # that worker is down: the other one takes it
            assert time.monotonic() < end, "no worker acknowledged a delivery"
        if rng.random() < DUPLICATE_SHARE:
            _post(order[1], body)  # a redelivery to the other worker


def _unfinished(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM inbox WHERE status <> 'done'").fetchone()
    return int(row[0]) if row else 0


def _stored(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT s.key, x.user_text FROM exchanges x JOIN sessions s ON s.id = x.session_id"
            " ORDER BY x.id"
        ).fetchall()
    return [(str(k), str(t)) for k, t in rows]


def test_two_workers_one_killed_lose_nothing_double_nothing_reorder_nothing(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """Duplicates to both workers and a kill -9 mid-load: 0 lost, 0 stored twice, 0 chats
    out of order."""
    rng = random.Random(SEED)
    url = postgres_server.create_database("workers")
    graph, model = FakeGraph(), FakeModel(seed=SEED, min_latency=0.01, max_latency=0.08)
    with graph.server, model.server:
        rig = Workers(tmp_path, url, graph, model)
        expected = {f"u{chat}{n:02d}" for chat in CHATS for n in range(PER_CHAT)}
        in_flight = 0
        try:
            rig.start(0)
            rig.start(1)
            for n in range(PER_CHAT):
                for chat in CHATS:
                    rig.deliver(chat, n, rng)
                if n == PER_CHAT // 2:
                    sigkill(rig.procs[0])  # mid-load: turns of worker 0 cut short
                    in_flight = _unfinished(url)
                if n == PER_CHAT // 2 + 1:
                    rig.start(0)
            _wait("every message answered", lambda: graph.answered() >= expected, rig.logs, 40)
        finally:
            for proc in rig.procs.values():
                sigkill(proc)
    assert in_flight > 0, "the kill landed on an idle system"
    stored = _stored(url)
    marks = [_MARK.findall(text)[0] for _, text in stored]
    assert not [m for m, c in Counter(marks).items() if c > 1], "a message was stored twice"
    assert set(marks) == expected, "a message was not stored"
    for chat in CHATS:
        mine = [_MARK.findall(t)[0] for k, t in stored if k == f"whatsapp:{chat}"]
        assert mine == [f"u{chat}{n:02d}" for n in range(PER_CHAT)], f"chat {chat} out of order"
    assert not graph.unexpected
    assert not model.unexpected
    for log in rig.logs:
        text = log.read_text("utf-8", "replace")
        assert "Traceback" not in text, tail(log)
        assert "job_failed" not in text, tail(log)
        assert "turn_failed" not in text, tail(log)
