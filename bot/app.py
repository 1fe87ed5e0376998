"""Wiring: settings → store, models, fold-in, engine, handler. One place, passed down."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import structlog
from pydantic import SecretStr

from bot.conversation.handler import ConversationHandler
from config.settings import Settings
from memory.engine import EngineConfig, MemoryEngine, TurnObserver
from memory.fold.extractive import ExtractiveSummarizer
from memory.fold.offload import ProcessFoldRunner
from memory.fold.service import FoldService
from memory.fold.summarizer import ModelSummarizer, Summarizer
from memory.recall import dense, related
from memory.store import Store
from memory.store import open as store_open
from memory.tokens import Tokenizer, default_tokenizer
from memory.topic.decide import TopicSettings, make_topic_check
from providers.base import ChatModel
from providers.factory import ProviderCredentials, build_chat_model

log = structlog.get_logger(__name__)
_frozen = False  # `freeze_startup` ran in this process


def freeze_startup() -> bool:
    """Once a process, after the first app's start-up: everything loaded so far (modules,
    the BPE tables, recall's related words) moved out of the cyclic collector's reach, so
    a full collection walks what turns allocate, not 240,000 start-up objects (about
    0.1 s each, on the event loop: one in a burst of 1,000 new chats cost 5 % of its
    throughput). Nothing is collected differently: start-up objects live as long as the
    process. Whether it froze now."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.collect()  # garbage of the start-up is freed, not frozen
    gc.freeze()
    return True


def credentials(settings: Settings) -> ProviderCredentials:
    def secret(value: SecretStr | None) -> str | None:
        return value.get_secret_value() if value is not None else None

    return ProviderCredentials(
        anthropic_api_key=secret(settings.anthropic_api_key),
        anthropic_base_url=settings.anthropic_base_url,
        openai_api_key=secret(settings.openai_api_key),
        openai_base_url=settings.openai_base_url,
    )


def build_models(
    settings: Settings, http_client: httpx2.AsyncClient | None = None
) -> tuple[ChatModel, ChatModel]:
    """The chat model and the summary model; a missing key raises naming its variable."""
    creds = credentials(settings)
    deadline, cap = settings.reply_deadline_seconds, settings.reply_max_chars
    chat = build_chat_model(
        settings.chat_spec, creds, http_client=http_client, deadline=deadline, reply_max_chars=cap
    )
    summary = build_chat_model(
        settings.summary_spec,
        creds,
        http_client=http_client,
        deadline=max(deadline, 60.0),
        reply_max_chars=cap,
    )
    return chat, summary


def make_summarizer(settings: Settings, summary_model: ChatModel) -> Summarizer:
    if settings.summary_spec.provider == "offline":
        return ExtractiveSummarizer()
    return ModelSummarizer(summary_model)


def topic_settings(settings: Settings) -> TopicSettings:
    return TopicSettings(
        mode=settings.topic_detection,
        profile=settings.topic_profile,
        idle_reset_hours=settings.idle_reset_hours,
        undo_seconds=settings.undo_minutes * 60,
        language=settings.language,
    )


def engine_config(settings: Settings) -> EngineConfig:
    return EngineConfig(
        system_prompt=settings.resolved_system_prompt(),
        window=settings.window_exchanges,
        fold_batch=settings.fold_batch,
        context_tokens=settings.context_tokens,
        reply_tokens=settings.reply_tokens,
        summary_tokens=settings.summary_tokens,
        language=settings.language,
        sync_fold_seconds=settings.reply_deadline_seconds * 0.6,
        undo_seconds=settings.undo_minutes * 60,
        recall_tokens=settings.recall_tokens if settings.recall == "on" else 0,
        reset_carry=settings.reset_carry,
    )


def build_engine(
    settings: Settings,
    store: Store,
    chat_model: ChatModel,
    summary_model: ChatModel,
    *,
    clock: Callable[[], datetime] | None = None,
    tokenizer: Tokenizer | None = None,
    observers: Sequence[TurnObserver] = (),
) -> MemoryEngine:
    """The engine and its fold-in service over `store`, every collaborator given at
    construction (`clock`: the wall clock unless given)."""
    clock = clock or (lambda: datetime.now(UTC))
    tokenizer = default_tokenizer() if tokenizer is None else tokenizer
    offline = settings.summary_spec.provider == "offline"
    # A model fold is a network wait; an offline fold is CPU, kept off the loop's.
    workers = settings.fold_workers if offline else 0
    folds = FoldService(
        store,
        make_summarizer(settings, summary_model),
        tokenizer,
        window=settings.window_exchanges,
        fold_batch=settings.fold_batch,
        summary_tokens=settings.summary_tokens,
        language=settings.language,
        concurrency=settings.fold_concurrency,
        clock=clock,
        runner=ProcessFoldRunner(workers) if workers else None,
    )
    return MemoryEngine(
        store,
        chat_model,
        folds,
        tokenizer,
        engine_config(settings),
        topic=make_topic_check(topic_settings(settings), None if offline else summary_model),
        clock=clock,
        observers=observers,
    )


async def open_store(settings: Settings, db: str | Path | None = None) -> Store:
    """The backend `VENTANA_DB` names (`memory.store.open`), with the settings' pool size
    and durability; warns when Telegram polling would run beside other workers."""
    target = db if db is not None else settings.db
    polling = settings.telegram_enabled and not settings.telegram_webhook_url
    if polling and store_open.is_postgres(target):
        log.warning(
            "telegram_polling_single_consumer",
            hint="long polling has one consumer: with several workers on PostgreSQL,"
            " set TELEGRAM_WEBHOOK_URL (webhook mode)",
        )
    return await store_open.open_store(
        target, pool_size=settings.db_pool_size, sync=settings.db_sync
    )


@dataclass
class App:
    settings: Settings
    store: Store
    chat_model: ChatModel
    summary_model: ChatModel
    tokenizer: Tokenizer
    folds: FoldService
    engine: MemoryEngine
    handler: ConversationHandler

    @classmethod
    async def build(
        cls,
        settings: Settings,
        *,
        db: str | Path | None = None,
        chat_model: ChatModel | None = None,
        summary_model: ChatModel | None = None,
        clock: Callable[[], datetime] | None = None,
        tokenizer: Tokenizer | None = None,
        observers: Sequence[TurnObserver] = (),
    ) -> App:
        """Everything wired from its collaborators at construction (nothing is patched
        afterwards): models default to the settings', `clock` to the wall clock (replay
        gives the transcript's), `observers` see every recorded turn."""
        if chat_model is None or summary_model is None:
            built_chat, built_summary = build_models(settings)
            chat_model = chat_model or built_chat
            summary_model = summary_model or built_summary
        tokenizer = default_tokenizer() if tokenizer is None else tokenizer
        tokenizer.count("warm-up")  # load the BPE tables now, not inside the first turn
        if settings.recall == "on":
            related.table()  # and recall's related words (about 0.1 s)
            dense.available()  # and its sentence embedding's vectors (about 0.6 s)
        store = await open_store(settings, db)
        engine = build_engine(
            settings, store, chat_model, summary_model,
            clock=clock, tokenizer=tokenizer, observers=observers,
        )  # fmt: skip
        handler = ConversationHandler(settings, store, engine)
        freeze_startup()
        return cls(
            settings, store, chat_model, summary_model, tokenizer, engine.folds, engine, handler
        )

    async def aclose(self) -> None:
        """Stop accepting work, let running turns and folds finish briefly, close the DB.
        The DB is closed even when this is cancelled partway (a second Ctrl-C, or one
        that lands during shutdown)."""
        try:
            await self.handler.aclose()
            await self.folds.aclose()
            for model in (self.chat_model, self.summary_model):
                closer = getattr(model, "aclose", None)
                if closer is not None:
                    await closer()
        finally:
            await self.store.close()
        log.info("stopped")
