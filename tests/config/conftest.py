"""Setup shared by the settings tests: they opt in to `clean_env` by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import Settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No setting from the developer's environment or a stray `.env` reaches the test."""
    for info in Settings.model_fields.values():
        for name in getattr(info.validation_alias, "choices", []):
            monkeypatch.delenv(str(name), raising=False)
    monkeypatch.delenv("VENTANA_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
