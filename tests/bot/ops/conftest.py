"""Shared fakes and settings for the operator-tools tests."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from config.settings import Settings, load_settings
from providers.base import Usage
from tests.support.fakes import ScriptedChatModel, last_message


def recording_model() -> ScriptedChatModel:
    """The scripted model answering `answer <n> to: …`, as the replay reports expect."""
    counter = ScriptedChatModel(name="recording", usage=Usage(1, 1))
    counter.reply = lambda request: (
        f"answer {len(counter.requests)} to: {last_message(request)[:60]}"
    )
    return counter


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "db": tmp_path / "ventana.db",
        "chat_model": "offline",
        "summary_model": "offline",
        "window_exchanges": 2,
        "fold_batch": 2,
        "topic_detection": "off",
        "language": "es",
        "operators": ("telegram:42",),
    }
    return load_settings(**(values | overrides))


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """`main()` configures logging onto pytest's captured stderr: undo that afterwards."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


def write_transcript(path: Path, lines: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def conversation(session: str, marker: str, turns: int, *, scripted: bool) -> list[dict[str, str]]:
    """`turns` user lines (with assistant lines when `scripted`) that all mention `marker`."""
    lines: list[dict[str, str]] = []
    for n in range(1, turns + 1):
        lines.append(
            {
                "role": "user",
                "session": session,
                "content": f"Mensaje {n} sobre el pedido {marker}-{n}, importe {n},50 €",
            }
        )
        if scripted:
            lines.append(
                {
                    "role": "assistant",
                    "session": session,
                    "content": f"Respuesta {n}: anotado {marker}-{n} ({n},50 €).",
                }
            )
    return lines


def interleave(*streams: list[dict[str, str]]) -> list[dict[str, str]]:
    """Round-robin over the user turns of several streams, keeping replies with their turn."""
    chunks = []
    for stream in streams:
        turns: list[list[dict[str, str]]] = []
        for line in stream:
            if line["role"] == "user":
                turns.append([line])
            else:
                turns[-1].append(line)
        chunks.append(turns)
    out: list[dict[str, str]] = []
    for i in range(max(len(c) for c in chunks)):
        for turns in chunks:
            if i < len(turns):
                out += turns[i]
    return out
