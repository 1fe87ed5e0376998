"""The shape of the code base: one-way dependencies, no import cycle, small modules,
small folders (DESIGN.md, Layout)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "memory", "providers", "config")
FRAMEWORKS = ("bot", "telegram", "starlette", "uvicorn")
# Being split on their own branch (issue 19); drop this set once that is merged.


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> Iterator[str]:
    """Every module `name` imports, absolute, at any depth (type-checking ones too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each one imports."""
    return {
        name: {dep for dep in _imported(name, path) if dep in MODULES and dep != name}
        for name, path in MODULES.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = 1, path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        state[node], _ = 2, path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check below would notice a cycle: a → b → a is reported as such."""
    assert _cycle({"a": {"b"}, "b": {"a"}, "c": set()}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle() -> None:
    """No module of bot/memory/providers/config imports itself through others."""
    assert _cycle(_graph()) is None


def _enclosing(package: str) -> list[str]:
    """`package` and the packages holding it: memory.store.sqlite, memory.store, memory."""
    parts = package.split(".")
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _nested(a: str, b: str) -> bool:
    return a == b or a.startswith(f"{b}.") or b.startswith(f"{a}.")


def _package_graph(graph: dict[str, set[str]], inits: set[str]) -> dict[str, set[str]]:
    """The packages (folders) of a module graph and the packages each one imports from.

    A module's package is its folder (`inits` are the modules that are a folder's
    `__init__`), and a package holds its sub-packages: an import from memory/store/sqlite/
    into memory/recall/ makes memory.store.sqlite → memory.recall and memory.store →
    memory.recall. An import between a package and one nested in it (memory/store/sqlite/
    → memory/store/, memory/engine.py → memory/fold/) is not counted: a sub-package builds
    on its parent's shared modules and the parent composes its sub-packages, and the
    module check keeps each such import one-way. Imports under `if TYPE_CHECKING` count,
    as in the module graph: a reader follows them all the same."""

    def folder(name: str) -> str:
        return name if name in inits else name.rpartition(".")[0]

    packages: dict[str, set[str]] = {}
    for name, deps in graph.items():
        sources = _enclosing(folder(name))
        for source in sources:
            packages.setdefault(source, set())
        for dep in deps:
            for source in sources:
                packages[source] |= {
                    target for target in _enclosing(folder(dep)) if not _nested(source, target)
                }
    return packages


def test_the_package_graph_counts_sub_packages_for_their_parent() -> None:
    """a/x/ importing b/ and b/ importing a/y/ is a cycle a → b → a; a/ importing its own
    a/x/ (and a/x/ its parent's modules) is not."""
    modules = {"a.x.m": {"b.n", "a.k"}, "b.n": {"a.y.k"}, "a.y.k": set(), "a.k": {"a.x.m"}}
    graph = _package_graph(modules, set())
    assert graph["a"] == {"b"}
    assert graph["b"] == {"a", "a.y"}
    assert _cycle(graph) == ["a", "b", "a"]
    assert _cycle(_package_graph({"a.x.m": {"a.k"}, "a.k": {"a.x.m"}}, set())) is None


def test_no_package_import_cycle() -> None:
    """No package (folder) of bot/memory/providers/config imports itself through others:
    memory.store → memory.recall → memory.fold → memory.store was one, through the facts
    now in memory/facts/; bot.conversation → bot.ops → bot.conversation another, through
    the chat views now in bot/conversation/."""
    inits = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    cycle = _cycle(_package_graph(_graph(), inits))
    assert cycle is None, " → ".join(cycle)


def test_config_imports_nothing_of_ours() -> None:
    """config/ is the bottom layer: it imports no other package of ours."""
    outside = {
        f"{name} → {dep}"
        for name, deps in _graph().items()
        if name.startswith("config")
        for dep in deps
        if not dep.startswith("config")
    }
    assert outside == set()


@pytest.mark.parametrize("package", ["memory", "providers"])
def test_core_never_imports_bot_or_a_framework(package: str) -> None:
    """memory/ and providers/ import neither bot/ nor Telegram nor a web framework."""
    bad = {
        f"{name} → {dep}"
        for name, path in MODULES.items()
        if name.split(".")[0] == package
        for dep in _imported(name, path)
        if dep.split(".")[0] in FRAMEWORKS
    }
    assert bad == set()


def test_no_module_over_400_lines() -> None:
    """Every module of ours, tests included, stays under 400 lines."""
    paths = [*MODULES.values(), *(ROOT / "tests").rglob("*.py")]
    long = {
        str(p.relative_to(ROOT)): n for p in paths if (n := len(p.read_bytes().splitlines())) > 400
    }
    assert long == {}


def test_no_folder_with_more_than_12_modules() -> None:
    """No package folder holds more than 12 modules side by side."""
    trees = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    folders = {p.parent for p in [*MODULES.values(), *trees]}
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in folders
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 12
    }
    assert crowded == {}
