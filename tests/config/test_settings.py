"""Settings: every contract variable parsed, invalid ones named together, secrets hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import Settings, SettingsInvalid, load_settings

CONTRACT = [
    "VENTANA_DB",
    "VENTANA_CHAT_MODEL",
    "VENTANA_SUMMARY_MODEL",
    "VENTANA_WINDOW_EXCHANGES",
    "VENTANA_FOLD_BATCH",
    "VENTANA_CONTEXT_TOKENS",
    "VENTANA_REPLY_TOKENS",
    "VENTANA_SUMMARY_TOKENS",
    "VENTANA_TOPIC_DETECTION",
    "VENTANA_IDLE_RESET_HOURS",
    "VENTANA_OPERATORS",
    "VENTANA_ALLOWED_USERS",
    "VENTANA_SYSTEM_PROMPT",
    "VENTANA_SYSTEM_PROMPT_FILE",
    "VENTANA_LANGUAGE",
    "VENTANA_GROUP_MODE",
    "VENTANA_LOG_FORMAT",
    "VENTANA_LOG_LEVEL",
    "VENTANA_HTTP_HOST",
    "VENTANA_HTTP_PORT",
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_BASE_URL",
    "TELEGRAM_WEBHOOK_URL",
    "TELEGRAM_WEBHOOK_SECRET",
    "WHATSAPP_ACCESS_TOKEN",
    "WHATSAPP_PHONE_NUMBER_ID",
    "WHATSAPP_APP_SECRET",
    "WHATSAPP_VERIFY_TOKEN",
    "WHATSAPP_GRAPH_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
]


pytestmark = pytest.mark.usefixtures("clean_env")


def test_defaults_match_the_contract() -> None:
    """Defaults are the ones DESIGN.md lists."""
    s = load_settings()
    assert (str(s.db), s.chat_model, s.summary_model) == ("data/ventana.db", "offline", "offline")
    assert (s.window_exchanges, s.fold_batch, s.context_tokens) == (6, 4, 8000)
    assert (s.reply_tokens, s.summary_tokens, s.topic_detection) == (1024, 800, "heuristic")
    assert (s.idle_reset_hours, s.operators, s.allowed_users) == (0, (), ())
    assert (s.language, s.group_mode, s.log_format, s.log_level) == (
        "es",
        "shared",
        "console",
        "info",
    )
    assert (s.http_host, s.http_port) == ("127.0.0.1", 8080)
    assert s.telegram_base_url == "https://api.telegram.org/bot"
    assert s.whatsapp_graph_url == "https://graph.facebook.com/v21.0"


def test_every_contract_variable_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each variable of the contract table reaches its setting."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Eres Domi.")
    values = {
        "VENTANA_DB": "x.db",
        "VENTANA_CHAT_MODEL": "anthropic:claude-sonnet-4-6",
        "VENTANA_SUMMARY_MODEL": "openai:gpt-4.1-nano",
        "VENTANA_WINDOW_EXCHANGES": "8",
        "VENTANA_FOLD_BATCH": "3",
        "VENTANA_CONTEXT_TOKENS": "9000",
        "VENTANA_REPLY_TOKENS": "500",
        "VENTANA_SUMMARY_TOKENS": "700",
        "VENTANA_TOPIC_DETECTION": "llm",
        "VENTANA_IDLE_RESET_HOURS": "12",
        "VENTANA_OPERATORS": "telegram:1, whatsapp:346",
        "VENTANA_ALLOWED_USERS": "telegram:2",
        "VENTANA_SYSTEM_PROMPT": "hi",
        "VENTANA_SYSTEM_PROMPT_FILE": str(prompt),
        "VENTANA_LANGUAGE": "en",
        "VENTANA_GROUP_MODE": "per_user",
        "VENTANA_LOG_FORMAT": "json",
        "VENTANA_LOG_LEVEL": "debug",
        "VENTANA_HTTP_HOST": "0.0.0.0",
        "VENTANA_HTTP_PORT": "9000",
        "TELEGRAM_BOT_TOKEN": "1:x",
        "TELEGRAM_BASE_URL": "http://127.0.0.1:1/bot",
        "TELEGRAM_WEBHOOK_URL": "https://e/x",
        "TELEGRAM_WEBHOOK_SECRET": "s3cr3t-s3cr3t-16",
        "WHATSAPP_ACCESS_TOKEN": "tok",
        "WHATSAPP_PHONE_NUMBER_ID": "123",
        "WHATSAPP_APP_SECRET": "app",
        "WHATSAPP_VERIFY_TOKEN": "ver",
        "WHATSAPP_GRAPH_URL": "http://127.0.0.1:2",
        "ANTHROPIC_API_KEY": "ak",
        "ANTHROPIC_BASE_URL": "http://a",
        "OPENAI_API_KEY": "ok",
        "OPENAI_BASE_URL": "http://o",
    }
    assert set(values) == set(CONTRACT)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    s = load_settings()
    assert s.window_exchanges == 8
    assert s.operators == ("telegram:1", "whatsapp:346")
    assert s.chat_spec.provider == "anthropic"
    assert s.summary_spec.model == "gpt-4.1-nano"
    assert s.resolved_system_prompt() == "Eres Domi."
    assert s.telegram_enabled
    assert s.whatsapp_enabled
    assert s.http_port == 9000
    assert s.openai_api_key is not None
    assert s.openai_api_key.get_secret_value() == "ok"


def test_every_invalid_variable_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One error lists each bad variable by its environment name."""
    monkeypatch.setenv("VENTANA_WINDOW_EXCHANGES", "many")
    monkeypatch.setenv("VENTANA_FOLD_BATCH", "0")
    monkeypatch.setenv("VENTANA_CHAT_MODEL", "gemini:pro")
    monkeypatch.setenv("VENTANA_TOPIC_DETECTION", "magic")
    monkeypatch.setenv("VENTANA_OPERATORS", "telegram:1,bob")
    monkeypatch.setenv("VENTANA_HTTP_PORT", "70000")
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    assert set(err.value.problems) == {
        "VENTANA_WINDOW_EXCHANGES",
        "VENTANA_FOLD_BATCH",
        "VENTANA_CHAT_MODEL",
        "VENTANA_TOPIC_DETECTION",
        "VENTANA_OPERATORS",
        "VENTANA_HTTP_PORT",
    }
    assert "gemini" in str(err.value)


def test_secrets_never_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the error nor the settings' repr shows a secret value."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:SUPERSECRET")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "bad secret with spaces")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://example.org/hook")
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    assert "TELEGRAM_WEBHOOK_SECRET" in err.value.problems
    assert "TELEGRAM_WEBHOOK_SECRET" in str(err.value)
    assert "bad secret" not in str(err.value)
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET")
    monkeypatch.delenv("TELEGRAM_WEBHOOK_URL")
    assert "SUPERSECRET" not in repr(load_settings())


def test_half_configured_whatsapp_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """WhatsApp without its app secret does not start; the error names what is missing."""
    monkeypatch.setenv("WHATSAPP_ACCESS_TOKEN", "t")
    monkeypatch.setenv("WHATSAPP_PHONE_NUMBER_ID", "1")
    monkeypatch.setenv("WHATSAPP_VERIFY_TOKEN", "v")
    with pytest.raises(SettingsInvalid, match="WHATSAPP_APP_SECRET"):
        load_settings()


def test_toml_file_and_env_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The TOML file named by VENTANA_CONFIG is read; the environment wins over it."""
    conf = tmp_path / "ventana.toml"
    conf.write_text('VENTANA_WINDOW_EXCHANGES = 9\nfold_batch = 5\nlanguage = "en"\n')
    monkeypatch.setenv("VENTANA_CONFIG", str(conf))
    monkeypatch.setenv("VENTANA_LANGUAGE", "es")
    s = load_settings()
    assert (s.window_exchanges, s.fold_batch, s.language) == (9, 5, "es")


def test_dotenv_is_read(tmp_path: Path) -> None:
    """A .env file in the working directory is a source."""
    (tmp_path / ".env").write_text("VENTANA_REPLY_TOKENS=321\n")
    assert load_settings().reply_tokens == 321


def test_broken_toml_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A malformed TOML file names VENTANA_CONFIG."""
    conf = tmp_path / "bad.toml"
    conf.write_text("window = = 3")
    monkeypatch.setenv("VENTANA_CONFIG", str(conf))
    with pytest.raises(SettingsInvalid, match="VENTANA_CONFIG"):
        load_settings()


def test_operator_and_allowlist_rules() -> None:
    """Operators are listed users; an allowlist admits only its users (and operators)."""
    s = Settings(operators=("telegram:1",), allowed_users=("telegram:2",))
    assert s.is_operator("telegram:1")
    assert not s.is_operator("whatsapp:1")
    assert s.is_allowed("telegram:2")
    assert s.is_allowed("telegram:1")
    assert not s.is_allowed("telegram:3")
    assert load_settings().is_allowed("whatsapp:999")


def test_a_user_entry_takes_its_channel_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Telegram:1` is `telegram:1`, as every choice is accepted in any case; spaces
    around either part do not make an entry that never matches."""
    monkeypatch.setenv("VENTANA_OPERATORS", "Telegram:1, WHATSAPP: 346")
    monkeypatch.setenv("VENTANA_ALLOWED_USERS", "telegram : 2")
    s = load_settings()
    assert s.operators == ("telegram:1", "whatsapp:346")
    assert s.is_operator("telegram:1")
    assert s.is_allowed("telegram:2")
    assert not s.is_allowed("telegram:3")


@pytest.mark.parametrize(
    ("secret", "why"),
    [
        ("x", "at least 16"),
        ("fifteen-chars-1", "at least 16"),
        ("sixteen chars ok", "A-Z, a-z, 0-9"),
        ("ñ" * 20, "A-Z, a-z, 0-9"),
        ("a" * 257, "at most 256"),
    ],
)
def test_a_weak_or_malformed_webhook_secret_is_refused(
    monkeypatch: pytest.MonkeyPatch, secret: str, why: str
) -> None:
    """TELEGRAM_WEBHOOK_SECRET: 16-256 characters of A-Za-z0-9_-, named but never printed."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:tok")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://example.org/hook")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", secret)
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    assert why in err.value.problems["TELEGRAM_WEBHOOK_SECRET"]
    assert secret not in str(err.value)


def test_a_sixteen_character_webhook_secret_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortest secret allowed: 16 characters."""
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "sixteen-chars_16")
    secret = load_settings().telegram_webhook_secret
    assert secret is not None
    assert secret.get_secret_value() == "sixteen-chars_16"


def test_a_blank_optional_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TELEGRAM_BOT_TOKEN=` (or four blank WhatsApp variables) enables no channel, and a
    blank base URL or prompt file leaves its default: blank is not a value."""
    for name in ("TELEGRAM_BOT_TOKEN", "WHATSAPP_ACCESS_TOKEN", "WHATSAPP_PHONE_NUMBER_ID",
                 "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN", "ANTHROPIC_BASE_URL",
                 "OPENAI_API_KEY", "VENTANA_SYSTEM_PROMPT_FILE"):  # fmt: skip
        monkeypatch.setenv(name, " " if name.startswith("WHATSAPP") else "")
    s = load_settings()
    assert s.channels == ()
    assert (s.telegram_bot_token, s.whatsapp_app_secret, s.anthropic_base_url) == (None,) * 3
    assert (s.openai_api_key, s.system_prompt_file) == (None, None)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e400"])
def test_a_number_setting_must_be_finite(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """`VENTANA_IDLE_RESET_HOURS=inf` is refused by name (0 is "never"): it passed `ge=0`
    and the replay report then held `Infinity`, which is not JSON."""
    monkeypatch.setenv("VENTANA_IDLE_RESET_HOURS", value)
    monkeypatch.setenv("VENTANA_HTTP_KEEPALIVE_SECONDS", value)
    with pytest.raises(SettingsInvalid) as caught:
        load_settings()
    assert set(caught.value.problems) == {
        "VENTANA_IDLE_RESET_HOURS",
        "VENTANA_HTTP_KEEPALIVE_SECONDS",
    }


def test_what_another_setting_needs_is_named_by_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A webhook URL without its token and secret, or WhatsApp half set, names each missing
    variable (it was one line labelled SETTINGS, the first problem only)."""
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example/telegram/webhook")
    monkeypatch.setenv("WHATSAPP_ACCESS_TOKEN", "t")
    monkeypatch.setenv("WHATSAPP_VERIFY_TOKEN", "v")
    with pytest.raises(SettingsInvalid) as caught:
        load_settings()
    assert set(caught.value.problems) == {
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_SECRET",
        "WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_APP_SECRET",
    }
    assert "SETTINGS" not in str(caught.value)


def test_what_another_setting_needs_is_named_beside_bad_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bad value elsewhere does not hide the settings another one needs: one message
    names them all (the pair check ran only once every single value was valid)."""
    monkeypatch.setenv("VENTANA_WINDOW_EXCHANGES", "zero")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example/telegram/webhook")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "short")  # invalid, but set
    monkeypatch.setenv("WHATSAPP_ACCESS_TOKEN", "t")
    with pytest.raises(SettingsInvalid) as caught:
        load_settings()
    assert set(caught.value.problems) == {
        "VENTANA_WINDOW_EXCHANGES",
        "TELEGRAM_WEBHOOK_SECRET",
        "TELEGRAM_BOT_TOKEN",
        "WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN",
    }
    assert "at least" in caught.value.problems["TELEGRAM_WEBHOOK_SECRET"]
    assert "webhook mode" in caught.value.problems["TELEGRAM_BOT_TOKEN"]
