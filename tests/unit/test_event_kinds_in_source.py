"""Events have one vocabulary: no ``DomainEvent`` in src/ is built with a string of its own (a literal or an
f-string) for its kind, and no event kind is compared with as a string literal; both use ``EventKind``
(docs/architecture.md#domain-events)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import doctordesk
from doctordesk.domain.event_kinds import EventKind

SOURCE = Path(doctordesk.__file__).parent
KIND_STRINGS = {k.value for k in EventKind}


def _is_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _kind_argument(call: ast.Call) -> ast.AST | None:
    given = [k.value for k in call.keywords if k.arg == "kind"]
    return given[0] if given else (call.args[0] if call.args else None)


def _named_domain_event(func: ast.AST) -> bool:
    return (isinstance(func, ast.Name) and func.id == "DomainEvent") or (
        isinstance(func, ast.Attribute) and func.attr == "DomainEvent"
    )


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SOURCE)}:{getattr(node, 'lineno', 0)}"


@cache
def _trees() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), filename=str(p))) for p in sorted(SOURCE.rglob("*.py"))]


def test_no_domain_event_is_built_with_a_string_kind() -> None:
    found = [
        _where(path, node)
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _named_domain_event(node.func) and _is_string(_kind_argument(node))
    ]
    assert found == [], "use EventKind for these events' kinds"


def test_no_event_kind_is_compared_with_a_string_literal() -> None:
    found = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            literals = [o for o in operands if isinstance(o, ast.Constant) and o.value in KIND_STRINGS]
            literals += [e for o in operands if isinstance(o, ast.Tuple | ast.Set | ast.List) for e in o.elts]
            if any(isinstance(e, ast.Constant) and e.value in KIND_STRINGS for e in literals):
                found.append(_where(path, node))
    assert found == [], "compare event kinds with EventKind members"


def test_the_check_finds_what_it_looks_for() -> None:
    bad = ast.parse('DomainEvent("clinic.changed", ())\nevents.DomainEvent(kind=f"appointment.{t}")')
    calls = [n for n in ast.walk(bad) if isinstance(n, ast.Call) and _named_domain_event(n.func)]
    assert len(calls) == 2 and all(_is_string(_kind_argument(c)) for c in calls)
    good = ast.parse("DomainEvent(EventKind.CLINIC_CHANGED, ())")
    call = next(n for n in ast.walk(good) if isinstance(n, ast.Call))
    assert not _is_string(_kind_argument(call))
