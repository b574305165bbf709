"""Names that say what they hold: no public function takes a one-letter parameter, and no import alias reuses the
name of one of doctordesk's packages for a different module (``rules as webhooks`` when services/webhooks exists).

Each check runs on src/ and on a small made-up source to show that it catches what it is for."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

import doctordesk
from tests.unit.architecture.imports import modules_under, tree

SOURCE = Path(doctordesk.__file__).parent

# An HTTP parameter's name is part of the API (``?q=``, ``/{n}``): a route keeps it, whatever its length.
HTTP_PARAMETERS = ("Query", "Path", "Header", "Cookie", "Form")


def _public_functions(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions and methods whose name does not start with ``_`` (dunders are public), at module level (also under
    ``if``/``try``) and in public classes."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not node.name.startswith("_") or (node.name.startswith("__") and node.name.endswith("__")):
                yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from _public_functions(node.body)
        elif isinstance(node, ast.If | ast.Try):
            yield from _public_functions([*node.body, *node.orelse])


def _http_parameter(annotation: ast.expr | None) -> bool:
    """``Annotated[..., Query(...)]`` and the like: a parameter FastAPI reads from the request by its name."""
    if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).endswith("Annotated")):
        return False
    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    return any(
        isinstance(part, ast.Call) and ast.unparse(part.func).split(".")[-1] in HTTP_PARAMETERS for part in parts[1:]
    )


def one_letter_parameters(module: ast.Module) -> list[str]:
    """``function(parameter)`` for each one-letter parameter of a public function."""
    found = []
    for function in _public_functions(module.body):
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        found += [
            f"{function.name}({argument.arg})"
            for argument in every
            if argument is not None
            and len(argument.arg) == 1
            and argument.arg != "_"
            and not _http_parameter(argument.annotation)
        ]
    return found


def package_names(root: Path) -> set[str]:
    """doctordesk's top-level packages, and the feature packages under services/ and domain/."""

    def packages(folder: Path) -> set[str]:
        return {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}

    return packages(root) | packages(root / "services") | packages(root / "domain")


def reused_aliases(module: ast.Module, names: Collection[str]) -> list[str]:
    """Imports whose alias is one of ``names`` but that import something else (``rules as webhooks``); an alias
    that keeps the module's own name (``import a.fhir as fhir``, ``from a import fhir as fhir``) is fine."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [
                f"line {node.lineno}: {alias.name} as {alias.asname}"
                for alias in node.names
                if alias.asname in names and alias.asname != alias.name.rsplit(".", 1)[-1]
            ]
    return found


def _everywhere(check: Callable[[ast.Module], list[str]]) -> dict[str, list[str]]:
    results = {name: check(tree(path)) for name, path in modules_under(SOURCE, "doctordesk").items()}
    return {name: found for name, found in results.items() if found}


def test_no_public_function_takes_a_one_letter_parameter():
    assert _everywhere(one_letter_parameters) == {}


def test_the_parameter_check_catches_one_letter_names():
    source = """
def render(s: Screen, *, f: Filter | None = None) -> Page: ...
def _helper(c): ...
class Store:
    def read(self, a: Appointment, *k): ...
    def __eq__(self, o): ...
class _Private:
    def read(self, a): ...
if TYPE_CHECKING:
    def typed(n: int): ...
def route(q: Annotated[str | None, Query(max_length=9)], n: Annotated[int, Path(ge=1)], key=lambda x: x): ...
"""
    assert one_letter_parameters(ast.parse(source)) == [
        "render(s)",
        "render(f)",
        "read(a)",
        "read(k)",
        "__eq__(o)",
        "typed(n)",
    ]


def test_no_import_alias_reuses_a_package_name_for_another_module():
    names = package_names(SOURCE)
    assert {"domain", "services", "web", "fhir", "webhooks", "chat", "review", "booking"} <= names
    assert _everywhere(lambda module: reused_aliases(module, names)) == {}


def test_the_alias_check_catches_a_reused_package_name():
    source = """
from doctordesk.domain.webhooks import rules as webhooks
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.services import fhir as fhir
import doctordesk.services.chat as chat
import doctordesk.web.routers.review as review_router
def later():
    from doctordesk.services.review import screen as review
"""
    assert reused_aliases(ast.parse(source), {"webhooks", "fhir", "chat", "review"}) == [
        "line 2: rules as webhooks",
        "line 8: screen as review",
    ]
