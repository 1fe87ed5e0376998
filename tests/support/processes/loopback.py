"""The one loopback HTTP server of the tests: threaded HTTP/1.1 on 127.0.0.1, routing
requests to a Python callable and recording each one (`received`).

Each connection gets a daemon thread, so a client killed with SIGKILL only ends its own
thread. `stop()` shuts the listener down; nothing outlives the test.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# (method, path, query + form params, JSON body or None) -> (status, JSON body, headers)
Reply = tuple[int, Any, dict[str, str]]
Route = Callable[[str, str, dict[str, str], Any], Reply]


@dataclass(frozen=True)
class Received:
    """One request as it arrived: header names in lower case, the JSON body parsed."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class LoopbackServer:
    """Serves `route` on an ephemeral loopback port until `stop()`."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.errors: list[str] = []  # exceptions raised by `route`: a bug in the fake
        self.received: list[Received] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client was killed halfway through its request
                    self.close_connection = True
                    return
                url = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(url.query, True).items()}
                body: Any = None
                kind = self.headers.get("Content-Type") or ""
                if "application/x-www-form-urlencoded" in kind:
                    params.update({k: v[0] for k, v in parse_qs(raw.decode(), True).items()})
                elif raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw
                heads = {name.lower(): value for name, value in self.headers.items()}
                server.received.append(Received(self.command, url.path, heads, body))
                try:
                    status, payload, headers = server.route(self.command, url.path, params, body)
                except Exception as exc:  # keep serving; the test reports it
                    server.errors.append(f"{self.command} {url.path}: {exc!r}")
                    status, payload, headers = 500, {"error": "fake failed"}, {}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client died (SIGKILL) while we answered
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.errors = self.errors
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    errors: list[str]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client killed mid-connection resets it: expected here; anything else is not."""
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            self.errors.append(repr(error))
