"""Nothing crosses keys, and neither secrets nor message bodies reach the logs.

Isolation runs four keys (`telegram:123`, `whatsapp:123`, `telegram:124`, `console:123`)
through one handler at once and looks for each key's planted markers everywhere the
others can be seen: model requests (chat and fold), replies, summaries, exports. The log
checks run the real program (`ventana run` with Telegram and WhatsApp, `ventana console`)
at info level with JSON logs and search its whole stderr.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.app import App
from bot.channels.whatsapp.webhook import sign
from config.settings import load_settings
from providers.base import ChatReply, ChatRequest, Usage
from tests.support.bot_api import FakeBotAPI
from tests.support.inbound import inbound as make_inbound
from tests.support.processes.model_api import FakeModel
from tests.support.processes.process import bot_env, reaped, spawn, tail
from tests.support.whatsapp import FakeGraph

KEYS = {"telegram:123": "TGA", "whatsapp:123": "WAA", "telegram:124": "TGB", "console:123": "COA"}
MARK = re.compile(r"\b(TGA|WAA|TGB|COA)(?=[-#@\d])")
TURNS = 9


@dataclass
class MarkerModel:
    """Chat and fold model in one: replies name the message; folds keep every marker."""

    name: str = "marker"
    requests: list[ChatRequest] = field(default_factory=list)

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        await asyncio.sleep(0.001 * (len(self.requests) % 5))  # let the keys interleave
        last = request.messages[-1].content
        if request.purpose == "fold":
            found = sorted(set(re.findall(r"#\w+", last)))
            text = "Hechos confirmados: el usuario registró los pedidos " + ", ".join(found) + "."
        else:
            found = re.findall(r"\b(?:TGA|WAA|TGB|COA)-\d+\b", last)
            text = f"Anotado {found[-1] if found else 'nada'}, gracias."
        return ChatReply(text, "end", Usage(10, 5), self.name)


def markers(text: str) -> set[str]:
    return set(MARK.findall(text))


def request_text(request: ChatRequest) -> str:
    return "\n".join([request.system, *(m.content for m in request.messages)])


async def test_keys_never_see_each_other(tmp_path: Path) -> None:
    """Same ids on two channels, concurrent turns, folds: each key only ever sees its own."""
    settings = load_settings(
        db=tmp_path / "v.db", chat_model="offline", summary_model="openai:fold",
        window_exchanges=2, fold_batch=2, topic_detection="heuristic", language="es",
    )  # fmt: skip
    model = MarkerModel()
    app = await App.build(settings, chat_model=model, summary_model=model)
    replies: dict[str, list[str]] = {key: [] for key in KEYS}

    async def talk(key: str, mark: str) -> None:
        user = key if not key.startswith("telegram:124") else "telegram:124"
        for n in range(TURNS):
            text = f"Soy {mark}-{n}: mi pedido es #{mark}{n}, correo {mark.lower()}{n}@x.com"
            inbound = make_inbound(key, text, f"{mark}{n}", user)
            replies[key] += await app.handler.handle(inbound)

    try:
        await asyncio.gather(*(talk(key, mark) for key, mark in KEYS.items()))
        await app.folds.drain()
        for key, mark in KEYS.items():
            assert all(markers(r) == {mark} for r in replies[key]), (key, replies[key])
            summary = make_inbound(key, "/summary", f"{mark}-summary")
            summary_reply = await app.handler.handle(summary)
            assert markers("\n".join(summary_reply)) <= {mark}
            exported = json.dumps(await app.store.export(key), ensure_ascii=False)
            assert markers(exported) == {mark}, key
            state = await app.store.peek_state(key, 2)
            assert state is not None
            assert state.summary is not None, "folds ran for every key"
            for episode in await app.store.episodes(key):
                for version in await app.store.summaries(episode.id):
                    assert markers(version.text) == {mark}, (key, version.text)
    finally:
        await app.aclose()
    folds = [r for r in model.requests if r.purpose == "fold"]
    chats = [r for r in model.requests if r.purpose == "chat"]
    assert folds
    assert len(chats) == TURNS * len(KEYS)
    for request in model.requests:
        assert len(markers(request_text(request))) == 1, request_text(request)


# -- logs -------------------------------------------------------------------------------

SECRETS = {
    "TELEGRAM_BOT_TOKEN": "424242:AAsecretTelegramTokenQx9",
    "OPENAI_API_KEY": "sk-proj-SECRETopenaiKEY0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-SECRETanthropicKEY98765",
    "WHATSAPP_ACCESS_TOKEN": "EAAGsecretWhatsAppAccessToken77",
    "WHATSAPP_APP_SECRET": "appsecretWhatsApp5f3e2d1c",
    "WHATSAPP_VERIFY_TOKEN": "verifySECRETtoken31337",
}
BODY = "BODYMARK"  # every message body carries it; no log line may


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wa_payload(n: int) -> bytes:
    message = {
        "from": "123",
        "id": f"wamid.in{n}",
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": f"{BODY}-wa-{n} mi tarjeta termina en 4242 y mi pedido es #9{n}"},
    }
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": "1065403"},
        "contacts": [{"profile": {"name": "Ana"}, "wa_id": "123"}],
        "messages": [message],
    }
    entry = {"id": "1", "changes": [{"value": value, "field": "messages"}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _wait(what: str, done: Any, log: Path, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}:\n{tail(log)}"
        time.sleep(0.05)


def _assert_log_clean(log: Path, *, expect_events: set[str]) -> None:
    text = log.read_text("utf-8")
    for name, secret in SECRETS.items():
        assert secret not in text, f"{name} leaked into the log"
        assert secret[-10:] not in text, f"part of {name} leaked into the log"
    assert BODY.lower() not in text.lower(), "a message body leaked into the log"
    events = set()
    for line in text.splitlines():
        if line.strip():
            events.add(json.loads(line)["event"])  # every line is JSON, as configured
    assert expect_events <= events, (expect_events - events, tail(log))


def test_run_logs_neither_secrets_nor_bodies(tmp_path: Path) -> None:
    """`ventana run` with Telegram and WhatsApp, faults included, at info level."""
    telegram = FakeBotAPI(token=SECRETS["TELEGRAM_BOT_TOKEN"], fail_send={2: 502})
    model = FakeModel(seed=7, faults={1: 429, 3: 500, 4: 500, 5: 500})
    graph = FakeGraph(phone_id="1065403")
    graph_server = graph.serve()
    port = _free_port()
    log = tmp_path / "run.log"
    with telegram.server, model.server, graph_server:
        env = bot_env(
            tmp_path,
            **SECRETS,
            TELEGRAM_BASE_URL=telegram.base_url(0),
            VENTANA_CHAT_MODEL="openai:fake",
            VENTANA_SUMMARY_MODEL="openai:fake",
            OPENAI_BASE_URL=model.base_url,
            WHATSAPP_PHONE_NUMBER_ID="1065403",
            WHATSAPP_GRAPH_URL=f"http://127.0.0.1:{graph_server.port}/v21.0",
            VENTANA_HTTP_PORT=str(port),
            VENTANA_DB=str(tmp_path / "v.db"),
            VENTANA_FOLD_BATCH="2",
            VENTANA_WINDOW_EXCHANGES="1",
            VENTANA_LOG_FORMAT="json",
            VENTANA_LOG_LEVEL="info",
        )
        with reaped(spawn(["run"], env, tmp_path, log)) as proc:
            _wait("the first poll", lambda: telegram.poll_count(0) > 0, log)
            for n in range(5):
                telegram.push_text(55, f"{BODY}-tg-{n} u{n} pedido #77{n} tel +34 600 000 00{n}")
            url = f"http://127.0.0.1:{port}/whatsapp/webhook"
            for n in range(3):
                raw = _wa_payload(n)
                secret = SECRETS["WHATSAPP_APP_SECRET"].encode()
                assert _post(url, raw, {"X-Hub-Signature-256": sign(secret, raw)}) == 200
            assert _post(url, _wa_payload(9), {"X-Hub-Signature-256": "sha256=00"}) == 403
            _wait("replies", lambda: len(telegram.sent) >= 4 and len(graph.texts) >= 3, log)
            proc.send_signal(15)
            assert proc.wait(timeout=30) == 0, tail(log)
    assert not telegram.unexpected
    assert not model.unexpected
    _assert_log_clean(
        log,
        expect_events={
            "telegram_started",
            "turn",
            "provider_retry",
            "whatsapp_bad_signature",
            "reply_undelivered",
        },
    )


def test_console_logs_neither_secrets_nor_bodies(tmp_path: Path) -> None:
    """`ventana console` piped, JSON logs at info: bodies go to stdout only, never stderr."""
    model = FakeModel(seed=3, faults={2: 429, 4: 500, 5: 500, 6: 500})
    log = tmp_path / "console.log"
    lines = [f"{BODY} línea {n}: mi pedido es #55{n} y mi clave es hunter{n}" for n in range(6)]
    with model.server:
        env = bot_env(
            tmp_path,
            **SECRETS,
            VENTANA_CHAT_MODEL="openai:fake",
            VENTANA_SUMMARY_MODEL="openai:fake",
            OPENAI_BASE_URL=model.base_url,
            WHATSAPP_PHONE_NUMBER_ID="1065403",
            VENTANA_DB=str(tmp_path / "v.db"),
            VENTANA_FOLD_BATCH="2",
            VENTANA_WINDOW_EXCHANGES="1",
            VENTANA_LOG_FORMAT="json",
            VENTANA_LOG_LEVEL="info",
        )
        # WhatsApp and Telegram settings are present but unused by `console`: still secret.
        proc = spawn(
            ["console"], env, tmp_path, log, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        with reaped(proc):
            out, _ = proc.communicate("\n".join(lines).encode() + b"\n", timeout=60)
            assert proc.returncode == 0, tail(log)
    assert out.decode().count(f"{BODY}") >= 1  # the console does show the conversation
    assert len(model.requests) >= len(lines)
    _assert_log_clean(log, expect_events={"turn", "provider_retry"})
