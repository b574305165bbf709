"""One rule for "admins only" (``domain/roles.require_admin``): who passes, what everyone else gets, and no
service or screen that refuses non-admins by a check of its own."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import doctordesk
from doctordesk.domain.errors import Forbidden, NotFound
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.roles import Actor, Role, require_admin
from doctordesk.domain.texts import N_
from doctordesk.services import screen_base

SOURCE = Path(doctordesk.__file__).parent


def actor(role: Role, **extra: object) -> Actor:
    return Actor(user_id=7, username="someone", role=role, display_name="Someone", **extra)  # type: ignore[arg-type]


def test_an_admin_passes():
    require_admin(actor(Role.ADMIN))
    require_admin(actor(Role.ADMIN), hidden=True)


@pytest.mark.parametrize("role", [Role.DOCTOR, Role.SUPPORT, Role.PATIENT])
def test_anyone_else_is_forbidden_with_the_default_message(role):
    with pytest.raises(Forbidden) as refused:
        require_admin(actor(role))
    assert refused.value.message == Forbidden.default_message


def test_hidden_answers_not_found_and_a_message_replaces_the_default():
    with pytest.raises(NotFound) as hidden:
        require_admin(actor(Role.SUPPORT), hidden=True)
    assert hidden.value.message == NotFound.default_message
    with pytest.raises(Forbidden) as told:
        require_admin(actor(Role.DOCTOR), message=N_("Only admins read the audit trail."))
    assert told.value.message == "Only admins read the audit trail."


def test_an_api_key_or_a_backend_service_is_never_an_admin():
    key = Integration(service_account_id=1, name="records", key_id=1, scopes=frozenset(Scope))
    with pytest.raises(Forbidden):
        require_admin(key)
    with pytest.raises(Forbidden):
        require_admin(actor(Role.SUPPORT, system_client="backend-app"))


def test_an_administration_screen_answers_a_non_admin_as_a_screen_that_is_not_theirs():
    screen_base.require_admin(actor(Role.ADMIN))
    with pytest.raises(NotFound) as refused:
        screen_base.require_admin(actor(Role.DOCTOR))
    assert refused.value.message == "Screen not found."


def _admin_only(test: ast.expr) -> bool:
    """``x.role is not Role.ADMIN``, ``x.role != Role.ADMIN`` or ``not x.is_admin`` anywhere in ``test``."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.IsNot | ast.NotEq) for op in node.ops):
            if any(isinstance(c, ast.Attribute) and c.attr == "ADMIN" for c in node.comparators):
                return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if isinstance(node.operand, ast.Attribute) and node.operand.attr == "is_admin":
                return True
    return False


def own_admin_checks(source: str, module: str) -> list[str]:
    """Where ``source`` refuses a non-admin by a check of its own (an ``if`` on the admin role that raises)."""
    return [
        f"{module}:{node.lineno}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.If)
        and _admin_only(node.test)
        and any(isinstance(n, ast.Raise) for stmt in node.body for n in ast.walk(stmt))
    ]


def test_no_service_or_screen_refuses_non_admins_by_a_check_of_its_own():
    found = [
        where
        for layer in ("services", "screens", "web")
        for path in sorted((SOURCE / layer).rglob("*.py"))
        for where in own_admin_checks(path.read_text(), str(path.relative_to(SOURCE)))
    ]
    assert found == [], "refuse through domain/roles.require_admin"


def test_a_check_of_its_own_is_caught():
    source = textwrap.dedent(
        """
        def one(actor):
            if actor.role is not Role.ADMIN:
                raise NotFound()

        def two(actor, user_id):
            if user_id != actor.user_id and not actor.is_admin:
                raise Forbidden()

        def fine(actor):
            if actor.role not in (Role.SUPPORT, Role.ADMIN):
                raise Forbidden()
            if not actor.is_admin:
                return None
            require_admin(actor)
        """
    )
    assert own_admin_checks(source, "x.py") == ["x.py:3", "x.py:7"]
