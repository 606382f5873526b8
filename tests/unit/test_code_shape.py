"""The shape of the code, held by tests: the core imports no I/O, and functions stay short.

Data flows ingest -> audit (evaluate, score, money, checks) -> store -> reports. The
core is a pure function of columns: it imports nothing that reads or writes, so a
test (or a Spark executor) can drive it with arrays alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipeline.core.games import VARIANTS, Family, Layout
from tests.conftest import ROOT

PIPELINE = ROOT / "pipeline"
CORE = ("pipeline.core",)
# What the core may not reach, directly or through another module of the project.
FORBIDDEN = (
    "pipeline.ingest",
    "pipeline.storage",
    "pipeline.outputs",
    "pipeline.engine",
    "pipeline.spark",
    "pipeline.generate",
    "pipeline.cli",
    "duckdb",
    "typer",
    "rich",
)
# The flow, floor first: a package imports only from its own floor and those below it
# (input -> audit -> store -> outputs, the engines and the command line above them).
FLOORS = (
    ("pipeline.helpers",),
    ("pipeline.core",),
    ("pipeline.ingest",),
    ("pipeline.storage",),
    ("pipeline.outputs",),
    ("pipeline.engine", "pipeline.generate"),
    ("pipeline.spark",),
    ("pipeline.cli", "pipeline.entry", "pipeline.__main__", "pipeline.api"),
)
LONGEST_FUNCTION = 60


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (lazy imports included)."""
    found: set[str] = set()
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1]])
                base = f"{base}.{node.module}" if node.module else base
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in PIPELINE.rglob("*.py")}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _reached(start: str, graph: dict[str, set[str]]) -> dict[str, str]:
    """Every module reachable from `start`, each with the module that imports it."""
    via: dict[str, str] = {}
    todo = [start]
    while todo:
        here = todo.pop()
        for name in graph.get(here, ()):
            if name not in via:
                via[name] = here
                todo.append(name)
    return via


@pytest.mark.parametrize("core", [m for m in sorted(_graph()) if _within(m, CORE)])
def test_the_core_imports_no_io(core: str) -> None:
    via = _reached(core, _graph())
    bad = sorted(name for name in via if _within(name, FORBIDDEN))
    assert not bad, f"{core} reaches {bad[0]} (imported by {via[bad[0]]})"


def _floor(module: str) -> int | None:
    for level, packages in enumerate(FLOORS):
        if _within(module, packages):
            return level
    return None


def test_every_package_imports_from_its_floor_or_below() -> None:
    upward = sorted(
        f"{module} imports {name}"
        for module, names in _graph().items()
        for name in names
        if (here := _floor(module)) is not None
        and (there := _floor(name)) is not None
        and there > here
    )
    assert upward == []


def test_the_contract_catches_a_forbidden_import(tmp_path: Path) -> None:
    graph = _graph()
    graph["pipeline.core.money"] = graph["pipeline.core.money"] | {"pipeline.storage.store"}
    assert "pipeline.storage.store" in _reached("pipeline.core.audit", graph)


def test_every_function_is_short_enough_to_hold_in_mind() -> None:
    long = []
    for path in sorted(PIPELINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LONGEST_FUNCTION:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert not long, long


# A game's behaviour is a property of its `Variant`, read through `games.per_game`:
# no module compares a game's name, family or layout to a word.
_GAME_WORDS = frozenset({*VARIANTS, *Family, *Layout})


def _game_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing to a game's name (==, !=, in, not in), or finding a game by its
    place in VARIANTS."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            words = [node.left, *node.comparators]
            for side in words:
                items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                if any(isinstance(i, ast.Constant) and i.value in _GAME_WORDS for i in items):
                    found.append(node.lineno)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "index"
            and "VARIANTS" in ast.unparse(node.value)
        ):
            found.append(node.lineno)
    return found


def test_no_module_tells_games_apart_by_their_names() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "pipeline").rglob("*.py"))
        if (lines := _game_comparisons(ast.parse(path.read_text())))
    }
    assert found == {}


def test_the_game_check_sees_a_name_compared() -> None:
    tree = ast.parse(
        'x = g.family == "open_face"\ny = name in ("ofc", "z")\nlist(VARIANTS).index(n)'
    )
    assert _game_comparisons(tree) == [1, 2, 3]
