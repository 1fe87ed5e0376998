"""The first app of a process takes its start-up objects out of the collector's walks."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from bot import app as app_module
from bot.app import App
from config.settings import load_settings
from providers.offline import OfflineChatModel


async def build(tmp_path: Path, name: str) -> App:
    settings = load_settings(db=tmp_path / f"{name}.db", fold_workers=0)
    model = OfflineChatModel()
    return await App.build(settings, chat_model=model, summary_model=model)


async def test_first_build_freezes_start_up_and_later_builds_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first `App.build` freezes the modules and tables loaded (a full collection
    walked them all, 0.1 s on the loop); a second build freezes nothing more."""
    monkeypatch.setattr(app_module, "_frozen", False)
    gc.unfreeze()  # as a fresh process: nothing frozen yet
    first = await build(tmp_path, "first")
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 10_000, "modules, the BPE tables and related words are frozen"
        second = await build(tmp_path, "second")
        await second.aclose()
        assert gc.get_freeze_count() <= frozen, "only the first build freezes (some die)"
        assert not app_module.freeze_startup()
    finally:
        await first.aclose()
