"""Configuration mistakes: a missing or unknown-keyed VENTANA_CONFIG file is an error,
bad values are echoed (secrets never), choices are accepted in any case, typo'd
variables and the offline model behind a real channel are warned about."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from config.checks import (
    describe_unknown,
    names_in_use,
    offline_behind_channel,
    unknown_variables,
)
from config.settings import Settings, SettingsInvalid, load_settings

pytestmark = pytest.mark.usefixtures("clean_env")


def test_missing_config_file_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """VENTANA_CONFIG naming no file stops the program instead of running on defaults."""
    monkeypatch.setenv("VENTANA_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    assert set(err.value.problems) == {"VENTANA_CONFIG"}
    assert "nope.toml" in str(err.value)
    assert "does not exist" in str(err.value)


def test_unknown_key_in_config_file_names_the_closest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A key no setting has is an error that suggests the setting meant."""
    conf = tmp_path / "ventana.toml"
    conf.write_text('window_exchange = 8\nVENTANA_LANGUAGE = "en"\nzzz = 1\n')
    monkeypatch.setenv("VENTANA_CONFIG", str(conf))
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    text = str(err.value)
    assert "'window_exchange' (did you mean VENTANA_WINDOW_EXCHANGES?)" in text
    assert "'zzz'" in text
    assert "VENTANA_LANGUAGE" not in text.replace("VENTANA_CONFIG", "")


@pytest.mark.parametrize(
    ("config", "why"),
    [
        (None, "does not exist"),
        ('zzz = 1\nfold_batch = "five"\n', "unknown key(s) 'zzz'"),
        ("window_exchanges = [\n", "ventana.toml: "),
    ],
)
def test_a_bad_config_file_hides_no_other_bad_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: str | None, why: str
) -> None:
    """A missing, unknown-keyed or malformed VENTANA_CONFIG is named in the same error as
    every bad variable, and the bad values a readable file holds."""
    conf = tmp_path / "ventana.toml"
    if config is not None:
        conf.write_text(config)
    monkeypatch.setenv("VENTANA_CONFIG", str(conf))
    monkeypatch.setenv("VENTANA_WINDOW_EXCHANGES", "abc")
    monkeypatch.setenv("VENTANA_RECALL", "maybe")
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    problems = err.value.problems
    assert why in problems["VENTANA_CONFIG"]
    assert "(got 'abc')" in problems["VENTANA_WINDOW_EXCHANGES"]
    assert "(got 'maybe')" in problems["VENTANA_RECALL"]
    assert ("VENTANA_FOLD_BATCH" in problems) == ("five" in (config or ""))


def test_known_keys_in_any_case_are_accepted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Field names, variable names and their lowercase all work as TOML keys."""
    conf = tmp_path / "ventana.toml"
    conf.write_text(
        'ventana_fold_batch = 5\nWINDOW_EXCHANGES = 9\ntelegram_base_url = "http://x/"\n'
    )
    monkeypatch.setenv("VENTANA_CONFIG", str(conf))
    s = load_settings()
    assert (s.fold_batch, s.window_exchanges, s.telegram_base_url) == (5, 9, "http://x/")


def test_config_file_named_in_dotenv_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """VENTANA_CONFIG in `.env` (as .env.example offers it) names the TOML file; the
    environment's wins."""
    (tmp_path / "a.toml").write_text("fold_batch = 5\n")
    (tmp_path / "b.toml").write_text("fold_batch = 7\n")
    (tmp_path / ".env").write_text("VENTANA_CONFIG=a.toml\n")
    assert load_settings().fold_batch == 5
    monkeypatch.setenv("VENTANA_CONFIG", "b.toml")
    assert load_settings().fold_batch == 7


def test_bad_values_are_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error shows the value each bad variable got, so the typo is visible."""
    monkeypatch.setenv("VENTANA_FOLD_BATCH", "zero")
    monkeypatch.setenv("VENTANA_LANGUAGE", "fr")
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    assert "(got 'zero')" in err.value.problems["VENTANA_FOLD_BATCH"]
    assert "(got 'fr')" in err.value.problems["VENTANA_LANGUAGE"]


@pytest.mark.parametrize(
    ("variable", "raw", "field", "value"),
    [
        ("VENTANA_LOG_FORMAT", "JSON", "log_format", "json"),
        ("VENTANA_LOG_LEVEL", "Warning", "log_level", "warning"),
        ("VENTANA_LANGUAGE", "EN", "language", "en"),
        ("VENTANA_TOPIC_DETECTION", " Off ", "topic_detection", "off"),
        ("VENTANA_GROUP_MODE", "PER_USER", "group_mode", "per_user"),
        ("VENTANA_DB_SYNC", "FULL", "db_sync", "full"),
        ("VENTANA_TOPIC_PROFILE", "Chat", "topic_profile", "chat"),
    ],
)
def test_choices_are_accepted_in_any_case(
    monkeypatch: pytest.MonkeyPatch, variable: str, raw: str, field: str, value: str
) -> None:
    """Every choice setting reads JSON, Json and json alike."""
    monkeypatch.setenv(variable, raw)
    assert getattr(load_settings(), field) == value


def test_unknown_variable_names_the_closest_known_one() -> None:
    """A typo'd VENTANA_ name is reported with the setting it most resembles."""
    found = unknown_variables(
        ["VENTANA_WINDOW_EXCHANGE", "VENTANA_FOLD_BATCH", "PATH", "VENTANA_CONFIG", "VENTANA_Q"]
    )
    assert found == [("VENTANA_Q", None), ("VENTANA_WINDOW_EXCHANGE", "VENTANA_WINDOW_EXCHANGES")]
    assert "did you mean VENTANA_WINDOW_EXCHANGES?" in describe_unknown(*found[1])
    assert unknown_variables(["VENTANA_WINDOW", "ventana_qqqq"]) == [
        ("VENTANA_WINDOW", "VENTANA_WINDOW_EXCHANGES"),  # an abbreviation of one setting
        ("ventana_qqqq", None),  # no setting starts with or resembles it
    ]


def test_offline_model_behind_a_real_channel_is_flagged() -> None:
    """Telegram answered by the offline model is flagged; the console or a real model is not."""
    telegram = Settings(telegram_bot_token=SecretStr("1:x"))
    warning = offline_behind_channel(telegram)
    assert warning is not None
    assert "Telegram" in warning
    assert "VENTANA_CHAT_MODEL" in warning
    assert offline_behind_channel(Settings()) is None
    real = Settings(
        telegram_bot_token=SecretStr("1:x"),
        chat_model="openai:gpt-4.1-mini",
        openai_api_key=SecretStr("sk"),
    )
    assert offline_behind_channel(real) is None


def test_names_in_dotenv_are_checked_too(tmp_path: Path) -> None:
    """A typo in .env is found like one in the environment."""
    (tmp_path / ".env").write_text("VENTANA_LANGAUGE=en\n", encoding="utf-8")
    found = unknown_variables(names_in_use(tmp_path / ".env"))
    assert ("VENTANA_LANGAUGE", "VENTANA_LANGUAGE") in found
