"""Every action the services record in the audit trail, and everything an entry is about, has its words for the
audit screen (screens/admin/audit_words.py): found by reading the services' code, so a new action without words fails
here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from doctordesk import i18n
from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.screens.admin.audit_words import ACTIONS, ENTITIES, action_words, entity_words

SERVICES = Path(__file__).resolve().parents[4] / "src" / "doctordesk" / "services"
# Calls that record an audit entry, with the action among their arguments or keywords.
RECORDERS = {"audit", "record_change", "_record", "_changed"}
CODE = re.compile(r"[a-z][a-z_-]*(\.[a-z][a-z_.-]*)?")


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def recorded() -> tuple[set[str], set[str]]:
    """The action codes and entity names the services' code records."""
    actions: set[str] = set()
    entities: set[str] = set()
    for path in SERVICES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            found: set[str] = set()
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                for keyword in node.keywords:
                    if keyword.arg in ("action", "audit_action"):
                        found |= _strings(keyword.value)
                    if keyword.arg == "entity":
                        entities |= _strings(keyword.value)
                if name in RECORDERS:
                    for arg in node.args:
                        found |= {s for s in _strings(arg) if "." in s}
            elif (
                isinstance(node, ast.Assign)
                and any(getattr(t, "id", "") == "action" for t in node.targets)
                and isinstance(node.value, ast.Constant | ast.IfExp)  # a code, not a form's field read
            ):
                found |= _strings(node.value)
            actions |= {s for s in found if CODE.fullmatch(s) and s != "appointment."}
    actions |= {f"appointment.{trigger.value}" for trigger in Trigger}
    return actions, entities


def test_every_recorded_action_has_its_words() -> None:
    actions, _ = recorded()
    assert {"login", "admin.user-created", "webhook.rotate-secret", "appointment.approve"} <= actions  # found
    assert sorted(actions - set(ACTIONS)) == []


def test_everything_an_entry_is_about_has_its_words() -> None:
    _, entities = recorded()
    assert {"appointment", "user", "webhook_endpoint"} <= entities
    assert sorted(entities - set(ENTITIES)) == []


def test_the_words_are_the_readers_and_an_unknown_code_shows_as_it_is() -> None:
    i18n.use("de")
    try:
        assert action_words("appointment.decline") == "Terminanfrage abgelehnt"
        assert entity_words("appointment", 7) == "Termin 7"
        assert action_words("something.new") == "something.new"
        assert entity_words("thing", None) == "thing"
    finally:
        i18n.use("en")
    assert action_words("appointment.decline") == "Appointment request declined"
