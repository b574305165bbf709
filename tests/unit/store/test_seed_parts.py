"""The demo seed names its parts: a plain list of the seeders it runs after the core (store/seed/demo.py), each
imported by name, and no module of the seed loads another by a string or imports one that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

import doctordesk.store.seed
from doctordesk.store.seed import demo
from doctordesk.store.seed.chat import seed_chat
from doctordesk.store.seed.offers import seed_offers

SEED = Path(doctordesk.store.seed.__file__).parent


def test_the_seeds_parts_are_listed_in_the_order_they_run():
    assert demo.PARTS == (seed_offers, seed_chat)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m.removeprefix("doctordesk.store.seed.") for m in found if m.startswith("doctordesk.store.seed.")}


def test_no_seed_module_loads_another_by_a_string():
    for path in SEED.glob("*.py"):
        assert "importlib" not in _imports(path) and "import_module" not in path.read_text(), path.name


def test_the_seeds_modules_import_each_other_in_no_circle():
    modules = {p.stem for p in SEED.glob("*.py")}
    graph = {p.stem: {m.split(".")[0] for m in _imports(p)} & modules for p in SEED.glob("*.py")}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    assert sorted(m for m in modules if reaches(m, m, set())) == []
