"""The framework's refusals and the audit trail in the reader's language, on SQLite and PostgreSQL: a field the
framework refuses (missing, out of range, wrong type, unknown, a JSON body) gets our message in the documented
error shape, in German for a German reader; the audit trail names its actions and what they were about in words.
(docs/web-app.md#language)"""

from __future__ import annotations

from typing import Any

from doctordesk.i18n import t
from doctordesk.screens.protocol import walk
from tests.support.fhir import assert_outcome
from tests.support.integration import make_key, request_body
from tests.support.review import REQUESTED, aid

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}
AUDIT = "/profile/admin/audit"


def by_id(elements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(elements)}


def refused(response: Any) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and body["status"] == 422
    return body


async def test_a_query_parameter_the_framework_refuses_is_explained_in_german(client, login) -> None:
    doctor = await login("doctor1")
    url = "/profile/messages/user-chat?appointment-id=abc"
    german = refused(await client.put(url, headers={**doctor.headers, **GERMAN}))
    assert german["message"] == "Ein oder mehrere Felder fehlen oder sind ungültig."
    assert german["fields"]["appointment-id"] == (
        "Eine ganze Zahl von 1 bis 9007199254740992 aus den Ziffern 0-9 (ohne Vorzeichen, Leerzeichen oder "
        "führende Nullen)."
    )
    english = refused(await client.put(url, headers={**doctor.headers, **ENGLISH}))
    assert english["fields"]["appointment-id"].startswith("A whole number from 1 to 9007199254740992")
    missing = refused(await client.put("/profile/messages/user-chat", headers={**doctor.headers, **GERMAN}))
    assert missing["fields"]["appointment-id"] == "Erforderlich."


async def test_a_json_body_the_framework_refuses_is_explained_in_german(client, login, demo) -> None:
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    url = "/integration/v1/appointment-requests"
    body = request_body(demo, duration_minutes=1000, colour="blue")
    body.pop("patient")
    german = refused(await client.post(url, json=body, headers={**key.headers, **GERMAN}))
    assert german["fields"] == {
        "patient": "Erforderlich.",
        "duration_minutes": "Höchstens 480.",
        "colour": "Kein bekanntes Feld.",
    }
    english = refused(await client.post(url, json=body, headers={**key.headers, **ENGLISH}))
    assert english["fields"] == {
        "patient": "Required.",
        "duration_minutes": "At most 480.",
        "colour": "Not a known field.",
    }
    typed = refused(await client.post(url, json=request_body(demo, doctor="one"), headers={**key.headers, **GERMAN}))
    assert "Input should" not in str(typed) and "Field required" not in str(typed)
    not_json = await client.post(
        url, content=b"{", headers={**key.headers, **GERMAN, "Content-Type": "application/json"}
    )
    assert not_json.status_code == 422 and "JSON" in str(refused(not_json)["fields"])
    seconds = request_body(demo, start="2026-11-30T09:00:30+01:00")
    whole_minutes = refused(await client.post(url, json=seconds, headers={**key.headers, **GERMAN}))
    assert whole_minutes["fields"]["start"] == "Verwenden Sie eine Uhrzeit in ganzen Minuten (Sekunden 00)."


async def test_the_audit_trail_reads_in_german(client, login, demo) -> None:
    doctor, admin = await login("doctor1"), await login("admin")
    a = aid(demo, REQUESTED)
    approved = await client.post(f"/profile/appointments/{a}/approve", headers=doctor.headers, data={"version": "1"})
    assert approved.status_code == 200, approved.text
    url = f"{AUDIT}?appointment={a}"
    german = (await client.put(url, headers={**admin.headers, **GERMAN})).json()
    assert german["title"] == "Protokoll"
    rows = [e for e in walk(german["elements"]) if e["type"] == "Row"]
    assert rows
    entry = by_id(rows[0]["children"])
    (action,) = [e for k, e in entry.items() if k.startswith("audit-action-")]
    (about,) = [e for k, e in entry.items() if k.startswith("audit-entity-")]
    (when,) = [e for k, e in entry.items() if k.startswith("audit-at-")]
    (who,) = [e for k, e in entry.items() if k.startswith("audit-actor-")]
    assert action["value"] == "Termin zugesagt · appointment.approve"
    assert action["props"]["code"] == "appointment.approve"
    assert about["value"] == f"Termin {a}" and when["label"] == "Wann" and who["value"] == "Dr. Anna Berger"
    assert when["value"] == "Mo., 23. Nov. 2026, 08:00:00 MEZ"  # the clinic's zone (Berlin), not UTC
    english = (await client.put(url, headers={**admin.headers, **ENGLISH})).json()
    first = by_id([r for r in walk(english["elements"]) if r["type"] == "Row"][0]["children"])
    assert {e["value"] for k, e in first.items() if k.startswith("audit-action-")} == {
        "Appointment approved · appointment.approve"
    }
    assert {e["value"] for k, e in first.items() if k.startswith("audit-at-")} == {"Mon 23 Nov 2026, 08:00:00 CET"}
    # Entries the service wrote on its own name it.
    everything = (await client.put(AUDIT, headers={**admin.headers, **GERMAN})).json()
    actions = {e["value"] for e in walk(everything["elements"]) if e["id"].startswith("audit-action-")}
    assert "Angemeldet · login" in actions


async def test_a_fhir_operation_outcome_explains_itself_in_german(client, login, demo) -> None:
    """The FHIR interface's refusals carry the service's text in the reader's language (the
    issue's code stays the code); a user's token reading an appointment that is not theirs, and no credentials."""
    patient = await login("patient2")
    other = aid(demo, REQUESTED)  # patient1's
    for path, headers, status, code in (
        ("/fhir/Appointment", {}, 401, "UNAUTHORIZED"),
        (f"/fhir/Appointment/{other}", patient.headers, 404, "NOT_FOUND"),
    ):
        english = await client.get(path, headers={**headers, **ENGLISH})
        german = await client.get(path, headers={**headers, **GERMAN})
        assert_outcome(english, status, code)
        assert_outcome(german, status, code)
        said = [i["details"]["text"] for i in english.json()["issue"]]
        assert [i["details"]["text"] for i in german.json()["issue"]] == [t("de", s) for s in said]
        assert said != [t("de", s) for s in said]  # a German text, not the English one again
