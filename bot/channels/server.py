"""The HTTP server of `ventana run`: uvicorn with limits a public webhook endpoint needs.

uvicorn closes a connection only once it has been idle after a response
(`timeout_keep_alive`); a client that connects and sends nothing, or dribbles its
headers or body a byte at a time, is kept forever. `guarded_protocol` adds the missing
deadlines to uvicorn's h11 protocol: the headers of each request within
`header_timeout`, its body within `body_timeout`, and a cap on open connections.

Idle connections cannot lock the endpoint out. A connection is *waiting* while no
request of it is with the app: connected and silent, between requests, or still sending
its headers. A new connection over the cap, or over its peer's share of it
(`per_peer`), closes the oldest waiting connection (of that peer, for the share) rather
than being refused, and a silent connection is closed after `keep_alive`; only requests
the app is handling (a webhook body being read included) hold their place. So
`/healthz` and a webhook call still get in under hundreds of idle sockets, and a
connection is refused only when every place is a request in progress. Closing a slow or
idle client is routine, so it is logged at debug. h11 caps only headers still
arriving (`h11_max_incomplete_event_size`); `HeaderLimit` refuses headers over
`MAX_HEADER_BYTES` that arrived in one piece.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from config.settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

log = structlog.get_logger(__name__)

GRACEFUL_SHUTDOWN_S = 5
MAX_HEADER_BYTES = 16 * 1024  # webhook calls carry a few hundred bytes of headers


@dataclass(frozen=True, slots=True)
class HttpLimits:
    header_timeout: float = 10.0
    body_timeout: float = 20.0
    keep_alive: float = 5.0
    max_connections: int = 256

    @property
    def per_peer(self) -> int:
        """Connections one client address may hold before its own waiting ones go."""
        return max(4, self.max_connections // 4)

    @classmethod
    def of(cls, settings: Settings) -> HttpLimits:
        return cls(
            settings.http_header_timeout_seconds,
            settings.http_body_timeout_seconds,
            settings.http_keepalive_seconds,
            settings.http_max_connections,
        )


def header_bytes(headers: list[tuple[bytes, bytes]]) -> int:
    """The size of `headers` as they came over the wire (`name: value` and CRLF)."""
    return sum(len(name) + len(value) + 4 for name, value in headers)


class HeaderLimit:
    """ASGI: a request with more than `limit` bytes of headers is answered 431 (Request
    Header Fields Too Large) and closed, without reaching a route."""

    def __init__(self, app: ASGIApp, limit: int = MAX_HEADER_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or header_bytes(scope["headers"]) <= self.limit:
            await self.app(scope, receive, send)
            return
        log.info("http_headers_too_large", limit=self.limit)
        headers = [(b"content-length", b"0"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 431, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def guarded_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with read deadlines and a connection cap."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _since = 0.0  # when it last started waiting (connected, or answered)
        _heard = False  # a byte of the current request arrived

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._since = self.loop.time()
            peer = self.client[0] if self.client else None
            others = self._others()  # open ones: an evicted socket may not be gone yet
            mine = [c for c in others if c.client and c.client[0] == peer]
            if peer is not None and len(mine) >= limits.per_peer:
                # The peer's oldest waiting one goes; when all of its are requests in
                # progress the new one still gets in, within the cap below.
                evicted = self._evict(mine, "http_peer_share")
                if evicted is not None:
                    others.remove(evicted)
            if len(others) >= limits.max_connections and not self._evict(others, "http_capacity"):
                log.debug("http_connection_refused", open=len(others))
                transport.close()
                return
            self._arm(min(limits.keep_alive, limits.header_timeout))  # silent: idle

        def data_received(self, data: bytes) -> None:
            if not self._heard and self._waiting():
                self._heard = True  # the request's headers are coming
                self._arm(limits.header_timeout)
            super().data_received(data)

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is None or self.transport.is_closing():
                return
            if not self.cycle.more_body:  # the whole request is in: the app's time now
                self._disarm()
            elif self.cycle is not cycle:  # new headers, body still to come
                self._arm(limits.body_timeout)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._since, self._heard = self.loop.time(), False
            if not self.transport.is_closing():
                self._arm(min(limits.keep_alive, limits.header_timeout))  # next request?

        def _waiting(self) -> bool:
            """No request of this connection is with the app."""
            return self.cycle is None or self.cycle.response_complete

        def _others(self) -> list[GuardedH11Protocol]:
            return [
                c
                for c in self.connections
                if c is not self
                and isinstance(c, GuardedH11Protocol)
                and not c.transport.is_closing()
            ]

        def _evict(self, among: list[GuardedH11Protocol], why: str) -> GuardedH11Protocol | None:
            """Close the oldest waiting connection of `among` (None when none waits)."""
            waiting = [c for c in among if c._waiting()]
            if not waiting:
                return None
            oldest = min(waiting, key=lambda c: c._since)
            log.debug("http_idle_evicted", why=why)
            oldest.transport.close()
            return oldest

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            cycle = self.cycle
            reading = cycle is None or cycle.response_complete or cycle.more_body
            if reading and not self.transport.is_closing():
                log.debug("http_read_timeout", body=bool(cycle and not cycle.response_complete))
                self.transport.close()  # the app, if it was reading, sees a disconnect

    return GuardedH11Protocol


def server_config(http: Starlette, settings: Settings) -> uvicorn.Config:
    limits = HttpLimits.of(settings)
    return uvicorn.Config(
        HeaderLimit(http),
        host=settings.http_host,
        port=settings.http_port,
        http=guarded_protocol(limits),
        log_config=None,
        lifespan="off",
        access_log=False,
        timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]  # a float works
        limit_concurrency=None,  # the protocol caps connections, evicting idle ones first
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


@contextlib.asynccontextmanager
async def serving(http: Starlette, settings: Settings) -> AsyncIterator[asyncio.Task[None]]:
    """Listen on `VENTANA_HTTP_HOST:PORT` for the block; yields the serving task.

    On exit the server stops accepting and lets answers in flight finish.
    """
    server = _Server(server_config(http, settings))
    sock = _bind(settings.http_host, settings.http_port)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="http")
    try:
        await _started(server, task)
        port = sock.getsockname()[1]
        log.info("http_serving", host=settings.http_host, port=port)
        yield task
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """Our own listening socket: a taken port is a clear error, not uvicorn's sys.exit."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


async def _started(server: _Server, serving: asyncio.Task[None]) -> None:
    """Wait until the server listens; re-raise if it failed on the way."""
    listening = asyncio.create_task(server.listening.wait())
    try:
        await asyncio.wait({serving, listening}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
    if serving.done():
        serving.result()
        raise RuntimeError("the HTTP server stopped while starting")


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: `cli._guarded` owns SIGTERM/SIGINT."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
