"""Every setting of the contract, parsed once at start and passed down.

Sources, strongest first: the environment, `.env`, then the TOML file named by
`VENTANA_CONFIG`, itself set in the environment or `.env` (keys are the variable names,
in any case: `VENTANA_WINDOW_EXCHANGES = 8` or `window_exchanges = 8`). Invalid values
are collected into one `SettingsInvalid` naming every bad variable and the value it got,
except secrets, which are never echoed. A `VENTANA_CONFIG` file that does not exist, or
a key in it that no setting has, is an error too, named in the same message as the
others. Choices (`json`/`console`, `es`/`en`, ...) are accepted in any case.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from config.problems import Missing, SettingsInvalid, channel_problems, closest, shown
from config.specs import ModelSpec, parse_spec

__all__ = ["Settings", "SettingsInvalid", "closest", "known_names", "load_settings"]

CHANNELS = ("telegram", "whatsapp", "console")
_SECRET_CHARS = re.compile(r"[A-Za-z0-9_-]*")  # what Telegram accepts, 1-256 of them
MIN_WEBHOOK_SECRET = 16  # a guessable secret lets anyone post updates as Telegram
MAX_WEBHOOK_SECRET = 256
_DEFAULT_PROMPTS = {
    "es": "Eres un asistente de atención al cliente amable, claro y preciso.",
    "en": "You are a friendly, clear and precise customer support assistant.",
}


def _v(env: str, default: Any, **kw: Any) -> Any:
    """A field read from `env` (or its lowercase field name in TOML)."""
    name = env.lower().removeprefix("ventana_")
    if isinstance(default, float):  # `inf` would pass `ge=0` and make a report invalid JSON
        kw.setdefault("allow_inf_nan", False)
    return Field(default, validation_alias=AliasChoices(env, env.lower(), name), **kw)


UserList = Annotated[tuple[str, ...], NoDecode]


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


Lower = BeforeValidator(_lower)  # choices are accepted in any case: JSON, Json, json


# For validation only: `memory.store.open` decides which backend a value opens (config
# imports nothing of ours; `tests/memory/store/test_open.py` pins the two equal).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", case_sensitive=False, populate_by_name=True
    )

    db: Path | str = _v("VENTANA_DB", Path("./data/ventana.db"))  # str: a PostgreSQL URL
    db_pool_size: int = _v("VENTANA_DB_POOL_SIZE", 16, ge=1, le=1000)
    db_sync: Annotated[Literal["normal", "full"], Lower] = _v("VENTANA_DB_SYNC", "normal")
    chat_model: str = _v("VENTANA_CHAT_MODEL", "offline")
    summary_model: str = _v("VENTANA_SUMMARY_MODEL", "offline")
    window_exchanges: int = _v("VENTANA_WINDOW_EXCHANGES", 6, ge=1, le=200)
    fold_batch: int = _v("VENTANA_FOLD_BATCH", 4, ge=1, le=200)
    fold_concurrency: int = _v("VENTANA_FOLD_CONCURRENCY", 16, ge=1, le=1000)
    # Processes running the offline fold (extractive summary, fact guard); 0: on the loop.
    fold_workers: int = _v("VENTANA_FOLD_WORKERS", 1, ge=0, le=64)
    context_tokens: int = _v("VENTANA_CONTEXT_TOKENS", 8000, ge=512, le=2_000_000)
    reply_tokens: int = _v("VENTANA_REPLY_TOKENS", 1024, ge=16, le=200_000)
    # A model that ignores its token limit is cut here: the reply is noise, not 1,000 messages.
    reply_max_chars: int = _v("VENTANA_REPLY_MAX_CHARS", 16_000, ge=1_000, le=1_000_000)
    summary_tokens: int = _v("VENTANA_SUMMARY_TOKENS", 800, ge=64, le=100_000)
    recall: Annotated[Literal["on", "off"], Lower] = _v("VENTANA_RECALL", "on")
    recall_tokens: int = _v("VENTANA_RECALL_TOKENS", 1000, ge=0, le=100_000)
    reset_carry: Annotated[Literal["identity", "none"], Lower] = _v(
        "VENTANA_RESET_CARRY", "identity"
    )
    topic_detection: Annotated[Literal["llm", "heuristic", "off"], Lower] = _v(
        "VENTANA_TOPIC_DETECTION", "heuristic"
    )
    topic_profile: Annotated[Literal["support", "chat"], Lower] = _v(
        "VENTANA_TOPIC_PROFILE", "support"
    )
    idle_reset_hours: float = _v("VENTANA_IDLE_RESET_HOURS", 0.0, ge=0)
    undo_minutes: float = _v("VENTANA_UNDO_MINUTES", 60.0, ge=0)
    max_message_chars: int = _v("VENTANA_MAX_MESSAGE_CHARS", 16_000, ge=100)
    max_queued_per_chat: int = _v("VENTANA_MAX_QUEUED_PER_CHAT", 20, ge=1)
    # Meta retries a webhook for up to 7 days; older is a replay. 0: no limit. Erasure
    # tombstones are kept 8 days (the inbox's pruning), so the limit stays within that.
    delivery_max_age_hours: float = _v("VENTANA_DELIVERY_MAX_AGE_HOURS", 168.0, ge=0, le=190)
    reply_deadline_seconds: float = _v("VENTANA_REPLY_DEADLINE_SECONDS", 25.0, gt=0, le=600)
    # Telegram private chats see the reply as it is written (sendMessageDraft).
    streaming: Annotated[Literal["on", "off"], Lower] = _v("VENTANA_STREAMING", "on")
    operators: UserList = _v("VENTANA_OPERATORS", ())
    allowed_users: UserList = _v("VENTANA_ALLOWED_USERS", ())
    system_prompt: str | None = _v("VENTANA_SYSTEM_PROMPT", None)
    system_prompt_file: Path | None = _v("VENTANA_SYSTEM_PROMPT_FILE", None)
    language: Annotated[Literal["es", "en"], Lower] = _v("VENTANA_LANGUAGE", "es")
    group_mode: Annotated[Literal["shared", "per_user"], Lower] = _v(
        "VENTANA_GROUP_MODE", "shared"
    )
    log_format: Annotated[Literal["json", "console"], Lower] = _v("VENTANA_LOG_FORMAT", "console")
    log_level: Annotated[Literal["debug", "info", "warning", "error"], Lower] = _v(
        "VENTANA_LOG_LEVEL", "info"
    )
    log_pseudonym_secret: SecretStr | None = _v("VENTANA_LOG_PSEUDONYM_SECRET", None)
    http_host: str = _v("VENTANA_HTTP_HOST", "127.0.0.1")
    http_port: int = _v("VENTANA_HTTP_PORT", 8080, ge=1, le=65535)
    http_header_timeout_seconds: float = _v("VENTANA_HTTP_HEADER_TIMEOUT_SECONDS", 10.0, gt=0)
    http_body_timeout_seconds: float = _v("VENTANA_HTTP_BODY_TIMEOUT_SECONDS", 20.0, gt=0)
    http_keepalive_seconds: float = _v("VENTANA_HTTP_KEEPALIVE_SECONDS", 5.0, gt=0)
    http_max_connections: int = _v("VENTANA_HTTP_MAX_CONNECTIONS", 256, ge=1)

    telegram_bot_token: SecretStr | None = _v("TELEGRAM_BOT_TOKEN", None)
    telegram_base_url: str = _v("TELEGRAM_BASE_URL", "https://api.telegram.org/bot")
    telegram_webhook_url: str | None = _v("TELEGRAM_WEBHOOK_URL", None)
    telegram_webhook_secret: SecretStr | None = _v("TELEGRAM_WEBHOOK_SECRET", None)

    whatsapp_access_token: SecretStr | None = _v("WHATSAPP_ACCESS_TOKEN", None)
    whatsapp_phone_number_id: str | None = _v("WHATSAPP_PHONE_NUMBER_ID", None)
    whatsapp_app_secret: SecretStr | None = _v("WHATSAPP_APP_SECRET", None)
    # The last of the channels' settings: its check reads the others (`_channels`).
    whatsapp_verify_token: SecretStr | None = _v(
        "WHATSAPP_VERIFY_TOKEN", None, validate_default=True
    )
    whatsapp_graph_url: str = _v("WHATSAPP_GRAPH_URL", "https://graph.facebook.com/v21.0")

    anthropic_api_key: SecretStr | None = _v("ANTHROPIC_API_KEY", None)
    anthropic_base_url: str | None = _v("ANTHROPIC_BASE_URL", None)
    openai_api_key: SecretStr | None = _v("OPENAI_API_KEY", None)
    openai_base_url: str | None = _v("OPENAI_BASE_URL", None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources = [init_settings, env_settings, dotenv_settings]
        toml = config_file()
        if toml and cls._reads_toml:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(toml)))
        return tuple(sources)

    _reads_toml: ClassVar[bool] = True

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object, info: ValidationInfo) -> object:
        """A blank optional setting is not set (`TELEGRAM_BOT_TOKEN=` from an uncommented
        template line, an empty Compose variable): an empty token enables no channel."""
        field = cls.model_fields.get(info.field_name or "")
        blank = isinstance(value, str) and not value.strip()
        return None if blank and field is not None and field.default is None else value

    @field_validator("db", mode="before")
    @classmethod
    def _db(cls, value: object) -> Path | str:
        """A plain path is a SQLite file; a URL must be PostgreSQL's (never echoed: it
        may hold a password)."""
        text = str(value)
        if "://" not in text:
            return Path(text)
        if text.startswith(POSTGRES_SCHEMES):
            return text
        scheme = text.split("://", 1)[0][:20]
        raise ValueError(
            f"{scheme}:// is not supported: use a SQLite file path, or a PostgreSQL URL"
            " (postgresql://… or postgres://…)"
        )

    @field_validator("chat_model", "summary_model")
    @classmethod
    def _spec(cls, value: str) -> str:
        return str(parse_spec(value))

    @field_validator("operators", "allowed_users", mode="before")
    @classmethod
    def _users(cls, value: object) -> tuple[str, ...]:
        items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
        users = []
        for user in (str(item).strip() for item in items if str(item).strip()):
            channel, _, ident = user.partition(":")
            channel, ident = channel.strip().lower(), ident.strip()  # choices in any case
            if channel not in CHANNELS or not ident:
                raise ValueError(
                    f"entry {user!r} is not channel:user_id (channel one of {CHANNELS})"
                )
            users.append(f"{channel}:{ident}")
        return tuple(users)

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        """Telegram's alphabet, and long enough not to be guessed (never echoed)."""
        if value is None:
            return value
        secret = value.get_secret_value()
        if not _SECRET_CHARS.fullmatch(secret):
            raise ValueError("must use only the characters A-Z, a-z, 0-9, _ and -")
        if len(secret) < MIN_WEBHOOK_SECRET:
            raise ValueError(f"must be at least {MIN_WEBHOOK_SECRET} characters long")
        if len(secret) > MAX_WEBHOOK_SECRET:
            raise ValueError(f"must be at most {MAX_WEBHOOK_SECRET} characters long")
        return value

    @field_validator("system_prompt_file")
    @classmethod
    def _prompt_file(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"file {str(value)!r} does not exist")
        return value

    @field_validator("whatsapp_verify_token")
    @classmethod
    def _channels(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """Settings that need another (`channel_problems`). A field check, not a model
        one: it runs beside every other field's error, where a model check runs only
        once they all pass."""
        problems = channel_problems({**info.data, "whatsapp_verify_token": value})
        if problems:
            raise Missing(problems)
        return value

    # Derived views -----------------------------------------------------------------

    @property
    def chat_spec(self) -> ModelSpec:
        return parse_spec(self.chat_model)

    @property
    def summary_spec(self) -> ModelSpec:
        return parse_spec(self.summary_model)

    @property
    def postgres_url(self) -> str | None:
        """The PostgreSQL URL when `VENTANA_DB` is one, else None (a SQLite file)."""
        return self.db if isinstance(self.db, str) else None

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_bot_token is not None

    @property
    def whatsapp_enabled(self) -> bool:
        return self.whatsapp_app_secret is not None and self.whatsapp_access_token is not None

    @property
    def channels(self) -> tuple[str, ...]:
        """The configured channels, `telegram` before `whatsapp`; empty: the console only."""
        enabled = (("telegram", self.telegram_enabled), ("whatsapp", self.whatsapp_enabled))
        return tuple(name for name, on in enabled if on)

    def resolved_system_prompt(self) -> str:
        if self.system_prompt_file is not None:
            return self.system_prompt_file.read_text(encoding="utf-8").strip()
        return self.system_prompt or _DEFAULT_PROMPTS[self.language]

    def is_operator(self, user: str) -> bool:
        """Listed operators; whoever sits at the console owns the database anyway."""
        return user in self.operators or user.startswith("console:")

    def is_allowed(self, user: str) -> bool:
        return not self.allowed_users or user in self.allowed_users or self.is_operator(user)


def _is_secret(name: str) -> bool:
    """Whether the field `name` (a field name or any of its aliases) holds a secret."""
    for field, info in Settings.model_fields.items():
        alias = info.validation_alias
        names = {field, *(str(c).lower() for c in getattr(alias, "choices", []))}
        if name.lower() in names:  # VENTANA_DB may be a URL with a password
            return field == "db" or SecretStr in (info.annotation, *get_args(info.annotation))
    return True  # unknown: do not risk echoing it


def _variable(loc: tuple[int | str, ...]) -> str:
    field = str(loc[0]) if loc else "settings"
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info else None
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return field.upper()


def known_names() -> dict[str, str]:
    """Every name a setting answers to, lowercased, mapped to its environment variable."""
    names: dict[str, str] = {}
    for field, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [field]
        env = str(choices[0])
        names.update({str(c).lower(): env for c in choices} | {field: env})
    return names


def config_file() -> str | None:
    """The TOML file VENTANA_CONFIG names: from the environment, else from `.env` (the
    TOML file cannot name itself); None when neither sets it."""
    if "VENTANA_CONFIG" in os.environ:
        return os.environ["VENTANA_CONFIG"] or None
    dotenv = Path(".env")
    return (dotenv_values(dotenv).get("VENTANA_CONFIG") or None) if dotenv.is_file() else None


def _toml_problem(raw: str) -> tuple[str | None, bool]:
    """What is wrong with the VENTANA_CONFIG file (None: nothing), and whether its values
    can still be read: a file with an unknown key can, a missing or malformed one cannot."""
    path = Path(raw)
    if not path.is_file():
        return f"file {raw!r} does not exist", False
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"{raw}: {exc}", False
    known = known_names()
    unknown = []
    for key in data:
        if key.lower() not in known:
            guess = closest(key.lower(), list(known))
            hint = f" (did you mean {known[guess]}?)" if guess else ""
            unknown.append(f"{key!r}{hint}")
    if unknown:
        return f"{raw}: unknown key(s) {', '.join(unknown)}", True
    return None, True


class _SettingsWithoutToml(Settings):
    """The other sources alone: still checked when the VENTANA_CONFIG file is unusable."""

    _reads_toml = False


def load_settings(**overrides: Any) -> Settings:
    """Read every source once; raise `SettingsInvalid` listing every bad variable, the
    VENTANA_CONFIG file among them (its problem never hides the others')."""
    toml = config_file()
    problem, readable = _toml_problem(toml) if toml else (None, True)
    problems = {"VENTANA_CONFIG": problem} if problem else {}
    try:
        settings = (Settings if readable else _SettingsWithoutToml)(**overrides)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            missing = err.get("ctx", {}).get("error")
            if isinstance(missing, Missing):  # named by variable, not as "SETTINGS"
                problems.update(missing.problems)
                continue
            loc = tuple(err["loc"])
            message = err["msg"].removeprefix("Value error, ")
            if loc and not _is_secret(str(loc[0])) and "input" in err:
                message += f" (got {shown(err['input'])})"
            problems.setdefault(_variable(loc), message)
        raise SettingsInvalid(problems) from None
    except (OSError, ValueError) as exc:  # an unreadable or malformed TOML file
        problems.setdefault("VENTANA_CONFIG", str(exc))
        raise SettingsInvalid(problems) from None
    if problems:
        raise SettingsInvalid(problems)
    return settings
