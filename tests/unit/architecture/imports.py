"""Which modules a tree of Python files holds, and which of them each imports.

An import is any way one module makes Python load another: ``import a.b`` and ``from a import b`` wherever they
stand (in functions, under ``TYPE_CHECKING``), relative imports (``from . import x``, ``from ..y import z``, read
as the modules they name), and ``importlib.import_module`` / ``import_module`` / ``__import__`` called with a
literal name, with a name taken in a loop over a module-level tuple or list of literal names, or with an f-string
(every module whose name starts with its literal head)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from functools import cache
from pathlib import Path

IMPORT_CALLS = ("import_module", "__import__")


def modules_under(root: Path, package: str) -> dict[str, Path]:
    """Module name → file for every ``.py`` under ``root``, which is the package named ``package``."""
    return {
        ".".join((*package.split("."), *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in sorted(root.rglob("*.py"))
    }


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def imports(name: str, path: Path, known: Collection[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports, itself left out."""
    found: set[str] = set()
    for wanted in _wanted(name, path):
        if wanted.endswith("*"):
            found.update(m for m in known if m.startswith(wanted[:-1]))
        else:
            # ``from a import b``: the module a.b if there is one, else the module a (b is a name in it).
            found.add(next((m for m in _candidates(wanted) if m in known), wanted))
    return {m for m in found if m in known and m != name}


def _candidates(wanted: str) -> Iterator[str]:
    yield wanted
    if "." in wanted:
        yield wanted.rsplit(".", 1)[0]


def _wanted(name: str, path: Path) -> Iterator[str]:
    """Dotted names the module asks for (``x.*``: every module under the prefix ``x``)."""
    module = tree(path)
    literals = _literal_collections(module)
    loops = _loop_names(module, literals)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            head = ".".join([*base, *([node.module] if node.module else [])])
            yield from (f"{head}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and _called(node) in IMPORT_CALLS and node.args:
            yield from _named_by(node.args[0], literals, loops)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _named_by(arg: ast.expr, literals: Mapping[str, list[str]], loops: Mapping[str, list[str]]) -> Iterator[str]:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        yield arg.value
    elif isinstance(arg, ast.Name):
        yield from loops.get(arg.id, literals.get(arg.id, []))
    elif isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value:
            yield f"{head.value}*"


def _literal_collections(module: ast.Module) -> dict[str, list[str]]:
    """Module-level names bound to a literal string or a tuple or list of them."""
    found: dict[str, list[str]] = {}
    for node in module.body:
        target, value = _assigned(node)
        if target is None or value is None:
            continue
        items = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        strings = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if strings and len(strings) == len(items):
            found[target] = strings
    return found


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _loop_names(module: ast.Module, literals: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Loop variables that run over a module-level collection of literal strings: ``for m in MODULES``."""
    return {
        node.target.id: literals[node.iter.id]
        for node in ast.walk(module)
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension)
        and isinstance(node.target, ast.Name)
        and isinstance(node.iter, ast.Name)
        and node.iter.id in literals
    }


def graph(modules: Mapping[str, Path], known: Collection[str]) -> dict[str, set[str]]:
    """Who imports whom: each module of ``modules`` → the modules of ``known`` it imports."""
    return {name: imports(name, path, known) for name, path in modules.items()}
