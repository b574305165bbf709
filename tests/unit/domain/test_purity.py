"""The domain package is plain Python: no web framework, ORM, validation library or HTTP client."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import doctordesk.domain

DOMAIN = Path(doctordesk.domain.__file__).parent
FORBIDDEN = ("fastapi", "starlette", "sqlalchemy", "pydantic", "pydantic_settings", "httpx", "alembic", "redis")
SOURCES = sorted(DOMAIN.rglob("*.py"))


def imported_modules(source: Path) -> set[str]:
    tree = ast.parse(source.read_text(), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
            "import_module",
            "__import__",
        ):
            names.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return names


def test_the_domain_package_has_modules():
    assert len(SOURCES) >= 5


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(DOMAIN)))
def test_a_domain_module_imports_no_framework_orm_or_http_library(source):
    bad = {m for m in imported_modules(source) if m.split(".")[0] in FORBIDDEN}
    assert not bad, f"{source.name} imports {sorted(bad)}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(DOMAIN)))
def test_a_domain_module_imports_nothing_outside_the_domain_from_doctordesk(source):
    bad = {m for m in imported_modules(source) if m.startswith("doctordesk.") and not m.startswith("doctordesk.domain")}
    assert not bad, f"{source.name} imports {sorted(bad)}"


def test_the_import_check_sees_every_import_form():
    sample = DOMAIN.parent / "web" / "deps.py"
    assert "fastapi" in imported_modules(sample)
