"""The layout holds (docs/architecture.md): every import runs down the layers or stays in its layer, no modules
import each other in a circle, no package folder holds more than 25 modules, no module more than 500 lines and no
function more than 80."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import doctordesk

SOURCE = Path(doctordesk.__file__).parent
MODULES = {
    ".".join(("doctordesk", *p.relative_to(SOURCE).with_suffix("").parts)).removesuffix(".__init__"): p
    for p in SOURCE.rglob("*.py")
}
# The floors, from the ground up: a module imports from its own floor or the ones below, never above.
FLOORS = {
    "domain": 0,
    "config": 1,
    "i18n": 1,
    "caches": 1,
    "store": 2,
    "screens": 2,
    "realtime": 3,
    "runtime": 4,
    "client": 4,
    "services": 5,
    "workers": 6,
    "cli_transfer": 6,
    "web": 7,
    "bootstrap": 8,
    "app": 9,
    "supervisor": 10,
    "cli": 10,
}


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _imports(name: str, path: Path) -> set[str]:
    """The doctordesk modules a module imports, wherever the import stands (type checking and functions too)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                found.add(full if full in MODULES else node.module)
    return {m for m in found if m in MODULES and m != name}


@cache
def graph() -> dict[str, set[str]]:
    """Who imports whom (built by the first test that asks, not when the tests are collected)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _floor(module: str) -> int | None:
    parts = module.split(".")
    return FLOORS.get(parts[1]) if len(parts) > 1 else None


def test_every_part_has_a_floor():
    assert {m.split(".")[1] for m in MODULES if m.count(".")} <= set(FLOORS)


def test_no_import_runs_up_a_floor():
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph().items()
        for b in targets
        if _floor(a) is not None and _floor(b) is not None and _floor(b) > _floor(a)  # type: ignore[operator]
    )
    assert upward == []


def test_no_modules_import_each_other_in_a_circle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph()[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for v in sorted(graph()):
        if v not in index:
            visit(v)
    assert circles == []


def test_no_package_folder_holds_more_than_25_modules():
    crowded = {
        str(folder.relative_to(SOURCE)): n
        for folder in [SOURCE, *(p.parent for p in SOURCE.rglob("__init__.py"))]
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 25
    }
    assert crowded == {}


def test_no_module_is_longer_than_500_lines():
    long = {str(p.relative_to(SOURCE)): n for p in MODULES.values() if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}


MAX_FUNCTION_LINES = 80
# Migrations are one DDL list each, read top to bottom: their upgrade() is as long as the schema step.
NOT_SPLIT = ("store/migrations/",)


def test_no_function_is_longer_than_80_lines():
    long = {
        f"{p.relative_to(SOURCE)}:{node.name}": length
        for p in MODULES.values()
        if not str(p.relative_to(SOURCE)).startswith(NOT_SPLIT)
        for node in ast.walk(_tree(p))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_the_checks_see_the_layout():
    assert "doctordesk.services.uow" in graph()["doctordesk.services.review.screen"]
    assert _floor("doctordesk.web.routers.admin.users") == FLOORS["web"]
