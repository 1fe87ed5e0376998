"""What ships beside the code stays true to it: .env.example, Dockerfile, compose.yaml,
LICENSE, README. Static checks (CI has no image registry to build the image against);
`make check-docker` runs this file alone."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from bot.cli.main import build_parser
from config.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_LINE = re.compile(r"^#\s?([A-Z][A-Z0-9_]*)=(.*)$")


def env_names() -> set[str]:
    """The environment variable of every settings field."""
    names = set()
    for info in Settings.model_fields.values():
        alias = info.validation_alias
        assert alias is not None
        assert hasattr(alias, "choices")
        names.add(str(alias.choices[0]))
    return names


def example_lines() -> list[tuple[str, str]]:
    text = (ROOT / ".env.example").read_text("utf-8")
    return [m.groups() for line in text.splitlines() if (m := EXAMPLE_LINE.match(line))]


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text("utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_env_example_lists_every_setting_once() -> None:
    """.env.example names exactly the settings fields and VENTANA_CONFIG, each once."""
    names = [name for name, _ in example_lines()]
    assert len(names) == len(set(names)), "a setting is listed twice"
    assert set(names) == env_names() | {"VENTANA_CONFIG"}


def readme_settings() -> set[str]:
    """The variables the README's settings table documents."""
    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme[readme.index("## Settings") : readme.index("## Command line")]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row)}


def example_comment(name: str) -> str:
    """The comment lines right above `# NAME=` in .env.example, joined."""
    lines = (ROOT / ".env.example").read_text("utf-8").splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith(f"# {name}="))
    above = []
    for line in reversed(lines[:at]):
        if not line.startswith("# ") or EXAMPLE_LINE.match(line):
            break
        above.insert(0, line.removeprefix("# "))
    return " ".join(above)


def test_env_example_agrees_with_the_readme() -> None:
    """Every setting of the README's table is in .env.example (VENTANA_CONFIG too), and
    the topic profile is described as README does: a threshold, no cue needed."""
    assert readme_settings() - {name for name, _ in example_lines()} == set()
    profile = example_comment("VENTANA_TOPIC_PROFILE")
    assert "threshold" in profile
    assert "cue" not in profile


def test_env_example_shows_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Uncommenting every line of .env.example changes nothing: each shows its default."""
    for name in [*env_names(), "VENTANA_CONFIG"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    defaults = load_settings().model_dump()
    lines = [f"{name}={value}" for name, value in example_lines() if value]
    (tmp_path / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_settings().model_dump() == defaults
    assert len(lines) >= 20  # the check compared real values, not an empty file


def test_dockerfile_copies_what_exists_and_runs_the_bot() -> None:
    """python:3.11-slim, COPY sources that exist, a non-root user, `ventana run`, /data."""
    steps = dockerfile()
    assert steps[0] == ("FROM", "python:3.11-slim")
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    copied = set()
    for word, args in steps:
        if word == "COPY":
            *sources, _dest = shlex.split(args)
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: no such file"
                copied.add(source)
    include = packages["tool"]["setuptools"]["packages"]["find"]["include"]
    assert {p.rstrip("*") for p in include} <= copied
    assert {packages["project"]["readme"], "LICENSE", "pyproject.toml"} <= copied
    users = [args for word, args in steps if word == "USER"]
    assert users
    assert users[-1] not in ("root", "0")
    assert ("ENTRYPOINT", '["ventana"]') in steps
    assert ("CMD", '["run"]') in steps
    assert "ventana" in packages["project"]["scripts"]
    env = " ".join(args for word, args in steps if word == "ENV")
    assert "VENTANA_DB=/data/ventana.db" in env
    assert ("VOLUME", "/data") in steps
    health = [args for word, args in steps if word == "HEALTHCHECK"]
    assert len(health) == 1
    assert "/healthz" in health[0]
    exec_form = json.loads(health[0].split(" CMD ", 1)[1])  # exec form: a JSON array
    assert exec_form[0] == "python"


def test_compose_runs_the_image_with_a_named_volume_for_the_database() -> None:
    """compose.yaml builds this folder and mounts a named volume, declared, on /data."""
    text = (ROOT / "compose.yaml").read_text("utf-8")
    assert re.search(r"^services:\n  \w[\w-]*:\n", text, re.M)
    assert re.search(r"^    build: \.$", text, re.M)
    mount = re.search(r"^      - ([\w-]+):/data$", text, re.M)
    assert mount is not None, "no named volume on /data"
    volumes = text[text.index("\nvolumes:") :]
    assert re.search(rf"^  {mount.group(1)}:", volumes, re.M)
    assert "VENTANA_DB: /data/ventana.db" in text


def test_license_is_the_one_pyproject_names() -> None:
    """LICENSE exists and is the MIT licence pyproject declares, for ventana contributors."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert project["license"] == {"text": "MIT"}
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 ventana contributors" in text


def test_readme_documents_every_setting_and_command() -> None:
    """Each settings variable and each `ventana` subcommand appears in the README."""
    readme = (ROOT / "README.md").read_text("utf-8")
    missing = sorted(name for name in env_names() if f"`{name}`" not in readme)
    assert not missing, f"README lacks {missing}"
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sub.choices is not None
    commands = sorted(name for name in sub.choices if f"`ventana {name}" not in readme)
    assert not commands, f"README lacks {commands}"
    assert "`ventana --version`" in readme


def test_make_run_installs_only_what_running_needs() -> None:
    """`make run` installs the package alone; `make test` the dev extra, on its own stamp."""
    text = (ROOT / "Makefile").read_text("utf-8")
    assert re.search(r"^run: \$\(RUN_STAMP\)$", text, re.M)
    assert re.search(r"^test: \$\(DEV_STAMP\)$", text, re.M)
    assert "$(PIP) -e .\n" in text.split("$(RUN_STAMP): pyproject.toml", 1)[1].split("\n\n")[0]
    assert "$(PIP) -e '.[dev]'" in text.split("$(DEV_STAMP): pyproject.toml", 1)[1]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    runtime = " ".join(extras["dependencies"])
    for tool in ("pytest", "mypy", "ruff", "openai-agents", "matplotlib"):
        assert tool not in runtime
