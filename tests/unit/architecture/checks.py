"""The layout's rules as functions of a tree of files: each returns what breaks its rule (empty: it holds).

tests/unit/test_architecture.py runs them on src/, bench/ and tests/support/, and on small made-up trees to show
that each catches what it is for."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from tests.unit.architecture.imports import tree


def upward(graph: Mapping[str, set[str]], floor: Callable[[str], int | None]) -> list[str]:
    """Imports from a lower floor to a higher one."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if (fa := floor(a)) is not None and (fb := floor(b)) is not None and fb > fa
    )


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other in a circle (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
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
                found.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def reaching(graph: Mapping[str, set[str]], *, into: tuple[str, ...]) -> list[str]:
    """Imports of modules whose names start with one of ``into`` (``bench``: ``bench`` and ``bench.*``)."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if _under(b, into))


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in prefixes)


def crowded_folders(root: Path, *, limit: int = 25) -> dict[str, int]:
    """Package folders holding more than ``limit`` modules (``__init__.py`` not counted)."""
    return {
        str(folder.relative_to(root)): n
        for folder in sorted({root, *(p.parent for p in root.rglob("__init__.py"))})
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > limit
    }


def folders_without_init(root: Path, *, loaded_by_path: tuple[str, ...] = ()) -> list[str]:
    """Folders holding ``.py`` files but no ``__init__.py``: their modules would be namespace packages, or
    importable only by a path on ``sys.path``. ``loaded_by_path``: folders (relative to ``root``) whose files are
    run by path, not imported (Alembic's ``migrations/``)."""
    return sorted(
        rel
        for folder in {p.parent for p in root.rglob("*.py")}
        if not (folder / "__init__.py").exists()
        and "__pycache__" not in folder.parts
        and not (rel := folder.relative_to(root).as_posix()).startswith(loaded_by_path)
    )


def long_modules(files: Iterable[Path], *, root: Path, limit: int = 500) -> dict[str, int]:
    """Modules longer than ``limit`` lines."""
    return {p.relative_to(root).as_posix(): n for p in files if (n := len(p.read_text().splitlines())) > limit}


def long_definitions(
    files: Iterable[Path], *, root: Path, kinds: tuple[type[ast.AST], ...], limit: int, skip: tuple[str, ...] = ()
) -> dict[str, int]:
    """Functions or classes (``kinds``) longer than ``limit`` lines, as ``path:name``; ``skip``: path prefixes."""
    return {
        f"{rel}:{node.name}": length
        for p in files
        if not (rel := p.relative_to(root).as_posix()).startswith(skip)
        for node in ast.walk(tree(p))
        if isinstance(node, kinds)
        and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > limit
    }


# A doc's code references: ``Code:`` up to the end of its sentence (a full stop before a capital, or the end of
# the paragraph); the paths in it are the backquoted names holding a slash.
_CODE = re.compile(r"(?:^|\s)Code:(.*?)(?:\.\s+(?=[A-Z*\"(\[])|\.?$)", re.DOTALL)
_QUOTED = re.compile(r"`([^`]+)`")


def code_paths(text: str) -> list[str]:
    """The paths the doc's ``Code:`` sentences name, in order (anchors dropped)."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in _CODE.findall(paragraph.replace("\n", " ")):
            for name in _QUOTED.findall(sentence):
                name = re.sub(r"/\s+", "/", name.strip()).split("#")[0]
                if "/" in name and " " not in name and "<" not in name and not name.startswith("/"):
                    found.append(name)
    return found


def has_code_line(text: str) -> bool:
    return bool(_CODE.search(text))


def missing_paths(doc: Path, *, repo: Path, package: str = "src/doctordesk") -> list[str]:
    """Paths a doc's ``Code:`` sentences name that exist nowhere: neither from the repository's root nor from the
    package's (``services/uow.py``) or a folder named before it, nor as a module's attribute
    (``store/fhir_tables.BulkJob``)."""
    missing: list[str] = []
    folders: list[Path] = []  # a name may be relative to a folder named before it: `services/fhir/` (`bulk/` ...)
    for name in code_paths(doc.read_text()):
        bases = [repo, repo / package, *folders]
        if not _exists(name, bases):
            missing.append(name)
        elif name.endswith("/"):
            folders.extend(b / name for b in bases if (b / name).is_dir())
    return missing


def _exists(name: str, bases: Iterable[Path]) -> bool:
    for base in bases:
        if (base / name).exists():
            return True
        head, _, attribute = name.rpartition(".")
        if attribute and "/" not in attribute and (base / f"{head}.py").exists():
            return True
    return False
