"""The audit trail's details in words (screens/audit_changes.py): changed fields as before → after, people and
places by name, money, instants in the given zone, a new record's fields, and a cap on the lines."""

from __future__ import annotations

from doctordesk.i18n import use
from doctordesk.screens.admin.audit_changes import MAX_LINES, Names, lines, person_ids

NAMES = Names(people={3: "Dr. Anna Berger", 9: "Kim Admin"}, locations={1: "Berlin Mitte Clinic"}, zone="Europe/Berlin")


def test_only_changed_fields_are_listed_as_before_and_after_in_words() -> None:
    details = {
        "before": {"id": 7, "kind": "doctor_fee", "doctor_id": 3, "location_id": None, "amount_cents": 6000,
                   "currency": "EUR", "retired": False, "effective_from": "2026-11-23T07:00:00+00:00"},
        "after": {"id": 8, "kind": "doctor_fee", "doctor_id": 3, "location_id": 1, "amount_cents": 8050,
                  "currency": "EUR", "retired": True, "effective_from": "2026-12-01T00:00:00+00:00"},
    }  # fmt: skip
    assert lines(details, NAMES) == [
        "Location: — → Berlin Mitte Clinic",
        "Amount: €60.00 → €80.50",
        "Ended: no → yes",
        "Effective from: Mon 23 Nov 2026, 08:00 CET → Tue 01 Dec 2026, 01:00 CET",
    ]


def test_a_new_record_lists_its_fields_and_other_facts_follow() -> None:
    details = {"before": None, "after": {"id": 4, "user_id": 3, "expires_at": "2026-11-24T07:00:00Z"}, "revoked": 2}
    assert lines(details, NAMES) == ["User: Dr. Anna Berger", "Expires: Tue 24 Nov 2026, 08:00 CET", "revoked: 2"]
    assert person_ids(details) == {3}


def test_unknown_people_lists_and_long_values_stay_readable() -> None:
    details = {"user_id": 42, "types": ["a", "b"], "note": "x" * 200}
    text = lines(details, NAMES)
    assert text[0] == "User: #42" and text[1] == "Event types: a, b"
    assert len(text[2]) < 100 and text[2].endswith("…")


def test_nothing_changed_says_so_and_many_lines_are_capped() -> None:
    assert lines({"before": {"a": 1}, "after": {"a": 1}}, NAMES) == ["No field changed."]
    many = {f"field_{i}": i for i in range(30)}
    out = lines(many, NAMES)
    assert len(out) == MAX_LINES and out[-1] == f"… and {30 - MAX_LINES + 1} more"


def test_in_german() -> None:
    use("de")
    try:
        changed = {"before": {"active": True, "timezone": None}, "after": {"active": False, "timezone": "UTC"}}
        out = lines(changed, NAMES)
    finally:
        use("en")
    assert out == ["Aktiv: ja → nein", "Zeitzone: — → UTC"]
