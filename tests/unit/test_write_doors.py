"""The services write through two doors only (services/uow.py): a use case through ``unit_of_work`` (one
transaction, its events published after commit), background and bulk work without a runtime through
``worker_transaction``. A bare ``db.transaction()`` anywhere else in services/ is refused here, and so is
``worker_transaction`` in a function that has the runtime (``rt``): that is a use case."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import doctordesk.services

SERVICES = Path(doctordesk.services.__file__).parent
DOORS = {("uow.py", "unit_of_work"), ("uow.py", "worker_transaction")}


def _is_bare_transaction(node: ast.AST) -> bool:
    """``db.transaction()``, ``rt.db.transaction()``, ``self.db.transaction()``: a transaction opened on a database."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "transaction"):
        return False
    target = node.func.value
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "db" or name.endswith("_db")


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]


def bare_transactions(source: str, module: str) -> list[str]:
    """Where ``source`` (the module ``module``, relative to services/) opens a transaction outside the doors."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for f in _functions(tree):
        if (module, f.name) in DOORS:
            allowed |= {id(n) for n in ast.walk(f)}
    return [f"{module}:{n.lineno}" for n in ast.walk(tree) if _is_bare_transaction(n) and id(n) not in allowed]


def worker_doors_in_use_cases(source: str, module: str) -> list[str]:
    """Functions of ``source`` that take the runtime and still write through ``worker_transaction``."""
    found = []
    for f in _functions(ast.parse(source)):
        arguments = {a.arg for a in (*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs)}
        calls = [
            n for n in ast.walk(f) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "worker_transaction"
        ]
        if "rt" in arguments and calls:
            found.append(f"{module}:{f.name}")
    return found


def _modules() -> list[tuple[str, str]]:
    return [(p.read_text(), str(p.relative_to(SERVICES))) for p in sorted(SERVICES.rglob("*.py"))]


def test_the_services_open_no_transaction_outside_the_two_doors():
    found = [where for source, module in _modules() for where in bare_transactions(source, module)]
    assert found == [], "write through unit_of_work (a use case) or worker_transaction (services/uow.py)"


def test_no_use_case_with_the_runtime_writes_through_the_workers_door():
    found = [where for source, module in _modules() for where in worker_doors_in_use_cases(source, module)]
    assert found == [], "a function that has the runtime writes through unit_of_work"


def test_the_doors_themselves_are_found():
    # The check looks where it should: the doors' own transaction is the one it allows.
    uow = (SERVICES / "uow.py").read_text()
    assert bare_transactions(uow, "other.py") != []
    assert bare_transactions(uow, "uow.py") == []


def test_a_bare_transaction_in_a_service_is_caught():
    source = textwrap.dedent(
        """
        async def rename(rt, name):
            async with rt.db.transaction() as session:
                await session.execute(...)

        async def prune(db):
            async with db.transaction() as session:
                await session.execute(...)

        async def fine(rt, db):
            async with unit_of_work(rt) as uow:
                await uow.session.execute(...)
            async with worker_transaction(db) as session:
                await session.execute(...)
            async with rt.db.read() as session:
                await session.execute(...)
        """
    )
    assert bare_transactions(source, "accounts/example.py") == ["accounts/example.py:3", "accounts/example.py:7"]
    assert worker_doors_in_use_cases(source, "accounts/example.py") == ["accounts/example.py:fine"]
