"""Every field the services record in an audit entry has a label for the audit screen (screens/admin/audit_labels.py),
found by reading the services' code: a new recorded field without a label fails here. And the details read as
words: names for ids, yes/no, a status and a moved appointment as "before → after", never JSON or a key."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from doctordesk import i18n
from doctordesk.screens.admin.audit import who_with_role
from doctordesk.screens.admin.audit_changes import Names, lines
from doctordesk.screens.admin.audit_labels import LABELS, SHOWN_OTHERWISE
from doctordesk.services.accounts.recovery import Ended
from doctordesk.services.admin.locations import LocationView
from doctordesk.services.admin.users import DoctorView, UserView

SERVICES = Path(__file__).resolve().parents[4] / "src" / "doctordesk" / "services"
# Calls that write an audit entry (or an appointment's history and audit entry, ``transition``).
RECORDERS = {"audit", "audit_now", "record_change", "add_recorded", "_record", "_changed", "transition"}
# Records written whole through ``dataclasses.asdict`` or an ``audited()`` of their own.
RECORDED_WHOLE = (UserView, DoctorView, LocationView)
# Keys the collector finds in the recording functions that never reach an entry: the answers, events, queries
# and field errors those functions build beside it.
NOT_RECORDED = {
    # An app's tokens (SMART) and a single sign-on client's settings.
    "access_token", "refresh_token", "id_token", "expires_in", "token_type", "need_patient_banner",
    "code_challenge_method", "transport", "timeout", "verify",
    # A FHIR Subscription as a resource.
    "lastUpdated", "meta", "resourceType", "type", "channel", "header", "error",
    # An appointment's event and history row, written beside the audit entry.
    "level", "text", "at", "appointment_id", "actor_id", "from_status", "to_status", "when", "details",
    # Field errors of the forms (never a value that is recorded).
    "code", "password", "new_password", "new_password_again",
    "otp", "ticket", "credential", "client_secret", "exclusions.doctors", "exclusions.services",
    "network.doctors", "network.locations", "jwks",
    # The rules a backend service's client assertion is checked by (joserfc's claim options).
    "essential", "value",
}  # fmt: skip


def _name(node: ast.AST) -> str:
    return getattr(node, "id", getattr(node, "attr", ""))


def _keys(function: ast.AST) -> set[str]:
    """The string keys of the dict literals in a function, and of ``details["key"] = ...``."""
    found: set[str] = set()
    for n in ast.walk(function):
        if isinstance(n, ast.Dict):
            found |= {k.value for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    found.add(t.slice.value)
    return found


def recorded_keys() -> dict[str, str]:
    """Each key the services may record, with one place that records it: the functions that call a recorder, and
    the functions of the same module they use (what builds the record they pass), followed through."""
    found: dict[str, str] = {}
    for path in sorted(SERVICES.rglob("*.py")):
        tree = ast.parse(path.read_text())
        functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        todo = [
            f
            for f in functions.values()
            if f.name not in RECORDERS
            and (
                f.name == "audited" or any(isinstance(c, ast.Call) and _name(c.func) in RECORDERS for c in ast.walk(f))
            )
        ]
        seen: set[str] = set()
        while todo:
            f = todo.pop()
            if f.name in seen:
                continue
            seen.add(f.name)
            for key in _keys(f):
                found.setdefault(key, f"{path.relative_to(SERVICES)}:{f.name}")
            todo += [functions[n] for n in {_name(n) for n in ast.walk(f)} if n in functions and n not in seen]
    for record in RECORDED_WHOLE:
        for f in dataclasses.fields(record):
            found.setdefault(f.name, record.__name__)
    for key in Ended(token_ids=(), app_tokens=0, devices=0).audited():
        found.setdefault(key, "Ended.audited")
    return found


def test_the_collector_finds_the_fields_of_each_kind_of_entry() -> None:
    found = recorded_keys()
    # A user's record, a sign-in, an appointment's decision and move, a webhook and an import.
    for key in ("display_name", "patient_id", "second_factor", "alternatives", "previous", "event_types", "counts"):
        assert key in found, key


def test_every_recorded_field_has_a_label() -> None:
    found = recorded_keys()
    missing = {k: where for k, where in found.items() if k not in LABELS and k not in SHOWN_OTHERWISE | NOT_RECORDED}
    assert missing == {}


def test_a_label_is_in_the_readers_language() -> None:
    names = Names({}, {}, "Europe/Berlin")
    assert lines({"second_factor": False, "patient_id": None}, names) == ["Second factor used: no", "Patient: —"]
    i18n.use("de")
    try:
        assert lines({"second_factor": False}, names) == ["Zweiter Faktor verwendet: nein"]
    finally:
        i18n.use("en")


def test_a_moved_appointment_reads_as_before_and_after_by_name() -> None:
    names = Names({1: "Dr. Berger", 2: "Dr. Chen"}, {10: "Berlin", 11: "Munich"}, "Europe/Berlin", {7: "Emma Müller"})
    details = {
        "from": 5, "to": 2, "action": "accept-offer", "offer": 3, "n": 2,
        "previous": {"doctor_id": 1, "location_id": 10, "start": "2026-11-30T07:00:00+00:00"},
        "doctor_id": 2, "location_id": 10, "start": "2026-12-01T09:30:00+00:00",
    }  # fmt: skip
    shown = lines(details, names)
    assert shown[:3] == [
        "Status: Alternatives offered → Approved",
        "Doctor: Dr. Berger → Dr. Chen",
        "Start: Mon 30 Nov 2026, 08:00 CET → Tue 01 Dec 2026, 10:30 CET",
    ]
    assert "Offer: 3" in shown and "Alternative: 2" in shown
    text = "\n".join(shown)
    assert "{" not in text and "_id" not in text and "previous" not in text and "accept-offer" not in text


def test_a_record_inside_an_entry_reads_in_words_not_json() -> None:
    names = Names({1: "Dr. Berger"}, {10: "Berlin"}, "Europe/Berlin", {7: "Emma Müller"})
    alternatives = [{"n": 1, "doctor_id": 1, "location_id": 10, "start": "2026-11-30T07:00:00+00:00",
                     "coverage_warning": None, "equals_request": False}]  # fmt: skip
    (shown,) = lines({"alternatives": alternatives}, names)
    assert shown.startswith("Alternatives sent: (Alternative: 1; Doctor: Dr. Berger; Location: Berlin; Start: Mon 30")
    assert "{" not in shown and '"' not in shown
    assert lines({"patient_id": 7, "canceled_by": "patient"}, names) == ["Patient: Emma Müller", "Canceled by: Patient"]


def test_the_role_is_named_once() -> None:
    assert who_with_role("Kim Novak (Support)", "support") == "Kim Novak (Support)"
    assert who_with_role("Dr. Lena Berger", "doctor") == "Dr. Lena Berger (Doctor)"
    i18n.use("de")
    try:
        assert who_with_role("Kim Novak (Support)", "support") == "Kim Novak (Support)"
        assert who_with_role("Emma Müller", "patient") == "Emma Müller (Patient)"
    finally:
        i18n.use("en")
