"""A summary model that loses every hard fact, served on loopback as OpenAI-compatible."""

from __future__ import annotations

import json
import re
import threading
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

LOSSY = "lossy"  # its model name: `--summary-model openai:lossy`

# IPs, emails, amounts, dates, ids). The lossy model drops every one of them.
_FACTY = re.compile(r"\S*(?:\d|@|\w[.:]\w)\S*")
_TAG = re.compile(r"</?[A-Za-z_][^>]*>")


def lossy_summary(prompt: str, words: int = 90) -> str:
    """What a careless summary model writes: the gist of the request's words with every
    identifier, address, amount and date gone (a retry with the missing list gets the
    same treatment)."""
    kept = _FACTY.sub(" ", _TAG.sub(" ", prompt)).split()
    gist = " ".join(kept[-words:]) or "sin novedades"
    return "Resumen: el cliente sigue con su caso y se han dado varios pasos. " + gist


class LossySummaryServer(AbstractContextManager["LossySummaryServer"]):
    """A loopback OpenAI-compatible Chat Completions endpoint answering every request
    with `lossy_summary` of its last message (plain JSON, also when asked to stream)."""

    def __init__(self) -> None:
        self.calls = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                    messages = body.get("messages") or [{}]
                    prompt = str(messages[-1].get("content") or "")
                except (ValueError, AttributeError, TypeError):
                    prompt = ""
                owner.calls += 1
                text = lossy_summary(prompt)
                reply = {
                    "id": f"chatcmpl-lossy-{owner.calls}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": LOSSY,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": len(prompt) // 4,
                        "completion_tokens": len(text) // 4,
                        "total_tokens": (len(prompt) + len(text)) // 4,
                    },
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
