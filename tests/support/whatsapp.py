"""Test rig for the WhatsApp channel: golden payloads, a scripted model, a fake Graph API.

The fake Graph API answers only `POST /v21.0/<phone id>/messages` with the right bearer
token; anything else is recorded, raised, and fails the test at teardown.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from config.settings import Settings
from memory.types import SessionKey
from tests.support.processes.loopback import LoopbackServer, Reply

DATA = Path(__file__).parents[1] / "data" / "whatsapp"
APP_SECRET = "ventana-test-app-secret"
VERIFY_TOKEN = "verify-me-7f3a"
ACCESS_TOKEN = "EAAG-test-access-token-never-logged"
PHONE_ID = "106540352242922"
GRAPH_URL = "https://graph.test/v21.0"
LUCIA = "whatsapp:5491155550101"
TOMAS = "whatsapp:34600111222"
ENV_PREFIXES = ("VENTANA_", "WHATSAPP_", "TELEGRAM_", "ANTHROPIC_", "OPENAI_")

Step = httpx.Response | Callable[[httpx.Request], httpx.Response]


def golden(name: str) -> bytes:
    """The exact bytes of a golden payload (signatures cover bytes, not parsed JSON)."""
    return (DATA / name).read_bytes()


def golden_json(name: str) -> Any:
    return json.loads(golden(name))


def clear_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No variable or `.env` of the developer's machine leaks into a test."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def make_settings(db: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "db": db,
        # The golden payloads are signed captures of 2024: no age limit for them (the
        # limit's own tests set it).
        "delivery_max_age_hours": 0,
        "whatsapp_access_token": ACCESS_TOKEN,
        "whatsapp_phone_number_id": PHONE_ID,
        "whatsapp_app_secret": APP_SECRET,
        "whatsapp_verify_token": VERIFY_TOKEN,
        "whatsapp_graph_url": GRAPH_URL,
        "topic_detection": "off",
        "language": "es",
    }
    values.update(overrides)
    return Settings(**values)


class FakeGraph:
    """The Graph API's send endpoint, scripted; unscripted sends succeed. In-process it is
    an `httpx.MockTransport` (`client`); for a bot in another process, `serve()` puts the
    same endpoint on a loopback port. Anything else is recorded as unexpected and fails."""

    def __init__(
        self, script: Iterable[Step] = (), *, phone_id: str = PHONE_ID, token: str = ACCESS_TOKEN
    ) -> None:
        self.path = f"/v21.0/{phone_id}/messages"
        self.token = token
        self.script = list(script)
        self.requests: list[httpx.Request] = []
        self.served: list[dict[str, Any]] = []  # bodies that came through `serve()`
        self.unexpected: list[str] = []
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        route_ok = request.method == "POST" and request.url.path == self.path
        auth_ok = request.headers.get("Authorization") == f"Bearer {self.token}"
        if not (route_ok and auth_ok and request.url.host == "graph.test"):
            self.unexpected.append(f"{request.method} {request.url}")
            raise AssertionError(f"unexpected Graph request: {request.method} {request.url}")
        self.requests.append(request)
        step = self.script.pop(0) if self.script else sent()
        return step(request) if callable(step) else step

    def serve(self) -> LoopbackServer:
        """The endpoint on 127.0.0.1 (unscripted: every send succeeds)."""
        return LoopbackServer(self._route)

    def _route(self, verb: str, path: str, _params: dict[str, str], body: Any) -> Reply:
        if verb == "POST" and path == self.path and isinstance(body, dict):
            self.served.append(body)
            return 200, golden_json("graph_errors.json")["sent"], {}
        self.unexpected.append(f"{verb} {path}")
        return 404, {"error": {"code": 100, "message": "unexpected"}}, {}

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests] + self.served

    @property
    def texts(self) -> list[str]:
        return [str(b["text"]["body"]) for b in self.bodies]

    def texts_to(self, key: str) -> list[str]:
        wa_id = SessionKey.parse(key).chat
        return [b["text"]["body"] for b in self.bodies if b["to"] == wa_id]


def sent() -> httpx.Response:
    return httpx.Response(200, json=golden_json("graph_errors.json")["sent"])


def graph_error(name: str, status: int = 400, headers: Mapping[str, str] | None = None) -> Step:
    return httpx.Response(status, json=golden_json("graph_errors.json")[name], headers=headers)


def count_rows(db: Path, table: str) -> int:
    """Read the database file directly, as a second process would."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def inbox_statuses(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return [str(row[0]) for row in conn.execute("SELECT status FROM inbox ORDER BY id")]
