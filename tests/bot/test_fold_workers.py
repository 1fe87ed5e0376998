"""The app's fold runner follows the settings: a worker process for offline folds only."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from bot.app import App
from config.settings import load_settings
from memory.fold.offload import InlineFoldRunner, ProcessFoldRunner
from providers.offline import OfflineChatModel
from tests.support.fakes import ScriptedChatModel


async def build(tmp_path: Path, **settings: object) -> App:
    return await App.build(
        load_settings(db=tmp_path / "v.db", **settings),
        chat_model=OfflineChatModel(),
        summary_model=ScriptedChatModel([]),
    )


async def test_offline_folds_get_a_worker_that_the_app_stops(tmp_path: Path) -> None:
    """`VENTANA_FOLD_WORKERS=1` with the offline summarizer: folds in a worker, started
    at the first fold, and `App.aclose` leaves no process behind."""
    before = set(multiprocessing.active_children())
    app = await build(tmp_path, fold_workers=1)
    try:
        assert isinstance(app.folds.runner, ProcessFoldRunner)
        assert set(multiprocessing.active_children()) == before  # nothing until a fold
        await app.folds.runner.start()
        assert set(multiprocessing.active_children()) - before
    finally:
        await app.aclose()
    assert set(multiprocessing.active_children()) == before


async def test_no_worker_for_a_model_summarizer_or_with_zero(tmp_path: Path) -> None:
    """A model fold is a network wait (on the loop), and `0` keeps offline folds there."""
    for settings in ({"fold_workers": 0}, {"summary_model": "openai:x", "openai_api_key": "k"}):
        app = await build(tmp_path, **settings)
        try:
            assert type(app.folds.runner) is InlineFoldRunner
        finally:
            await app.aclose()
