"""The packages of ``services/`` import each other without a circle (docs/architecture.md#services): features
import shared packages (audit, lifecycle, scheduling, the screens' helpers) and the features below them, never
back. Every import counts: at module level, inside functions, relative, and ``importlib.import_module`` with a
literal name. A second test feeds the same check a small made-up tree with a circle, so a check that finds nothing
cannot pass by seeing nothing."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import doctordesk

SERVICES = Path(doctordesk.__file__).parent / "services"
ROOT = "doctordesk.services"

# package -> package it imports -> the files (relative to services/) whose imports make that edge
Edges = dict[str, dict[str, set[str]]]


def _module_of(path: str) -> tuple[str, str]:
    """The dotted name of the file at ``path`` (relative to services/) and the package its relative imports start
    from."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        name = ".".join((ROOT, *parts[:-1]))
        return name, name
    name = ".".join((ROOT, *parts))
    return name, name.rpartition(".")[0]


def _relative(base: str, level: int, module: str | None) -> str:
    start = base.split(".")[: len(base.split(".")) - (level - 1)]
    return ".".join((*start, *((module,) if module else ())))


def _is_import_module(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name == "import_module"


def _imported(source: str, path: str) -> Iterator[str]:
    """Every dotted name the file at ``path`` imports, wherever the import stands."""
    _name, base = _module_of(path)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _relative(base, node.level, node.module) if node.level else node.module
            if module is None:
                continue
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_import_module(node) and node.args:
            target = node.args[0]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                package = next((k.value for k in node.keywords if k.arg == "package"), None)
                name = target.value
                if name.startswith(".") and isinstance(package, ast.Constant) and isinstance(package.value, str):
                    level = len(name) - len(name.lstrip("."))
                    name = _relative(package.value, level, name.lstrip(".") or None)
                yield name


def _package_of(dotted: str, packages: set[str]) -> str | None:
    parts = dotted.split(".")
    if len(parts) < 3 or ".".join(parts[:2]) != ROOT or parts[2] not in packages:
        return None
    return parts[2]


def package_edges(sources: Mapping[str, str]) -> Edges:
    """The graph of services/' packages (a top-level module counts as a package of its own) from the files'
    sources, keyed by their paths relative to services/ (``fhir/holds.py``)."""
    packages = {path.split("/")[0].removesuffix(".py") for path in sources} - {"__init__"}
    edges: Edges = {}
    for path, source in sorted(sources.items()):
        mine = path.split("/")[0].removesuffix(".py")
        for dotted in _imported(source, path):
            theirs = _package_of(dotted, packages)
            if theirs is not None and mine in packages and theirs != mine:
                edges.setdefault(mine, {}).setdefault(theirs, set()).add(path)
    return edges


def find_circle(edges: Edges) -> list[tuple[str, str, list[str]]]:
    """One circle of the graph as its edges with their files (first package by name where there are several),
    or an empty list when there is none."""
    done: set[str] = set()

    def walk(package: str, trail: list[str]) -> list[str] | None:
        if package in trail:
            return [*trail[trail.index(package) :], package]
        if package in done:
            return None
        for target in sorted(edges.get(package, {})):
            circle = walk(target, [*trail, package])
            if circle is not None:
                return circle
        done.add(package)
        return None

    for start in sorted(edges):
        circle = walk(start, [])
        if circle is not None:
            return [(a, b, sorted(edges[a][b])) for a, b in zip(circle, circle[1:], strict=False)]
    return []


def _described(circle: list[tuple[str, str, list[str]]]) -> str:
    return "\n".join(f"  {a} -> {b}: {', '.join(files)}" for a, b, files in circle)


def _services_sources() -> dict[str, str]:
    return {path.relative_to(SERVICES).as_posix(): path.read_text() for path in SERVICES.rglob("*.py")}


def test_the_service_packages_import_each_other_without_a_circle() -> None:
    edges = package_edges(_services_sources())
    circle = find_circle(edges)
    assert not circle, "services/ packages import each other in a circle:\n" + _described(circle)


def test_the_check_sees_the_packages_and_their_imports() -> None:
    edges = package_edges(_services_sources())
    assert "lifecycle" in edges["booking"], edges.get("booking")
    assert "audit" in edges["admin"], edges.get("admin")


def test_a_circle_through_every_kind_of_import_is_found() -> None:
    sources = {
        "__init__.py": "",
        "uow.py": "",
        # module level, absolute
        "billing/__init__.py": "from doctordesk.services.shipping import labels\n",
        # inside a function, relative
        "shipping/labels.py": "def label():\n    from ..stock import counts\n    return counts\n",
        # importlib with a literal name
        "stock/counts.py": (
            "import importlib\n\ndef later():\n    return importlib.import_module('doctordesk.services.billing.fees')\n"
        ),
        "stock/__init__.py": "from doctordesk.services import uow\n",
        "billing/fees.py": "",
    }
    edges = package_edges(sources)
    assert edges == {
        "billing": {"shipping": {"billing/__init__.py"}},
        "shipping": {"stock": {"shipping/labels.py"}},
        "stock": {"billing": {"stock/counts.py"}, "uow": {"stock/__init__.py"}},
    }
    circle = find_circle(edges)
    assert circle == [
        ("billing", "shipping", ["billing/__init__.py"]),
        ("shipping", "stock", ["shipping/labels.py"]),
        ("stock", "billing", ["stock/counts.py"]),
    ]
    assert "  stock -> billing: stock/counts.py" in _described(circle)
    # the same tree with the importlib edge gone has no circle
    assert find_circle(package_edges({**sources, "stock/counts.py": ""})) == []
