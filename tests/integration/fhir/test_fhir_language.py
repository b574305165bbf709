"""The FHIR interface answers in the request's language (``Accept-Language``): an OperationOutcome's texts, the
rules' and the interface's own, are German on a German request and English otherwise (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from tests.support.fhir import FHIR_JSON, assert_outcome, entries, resource_of
from tests.support.integration import make_key

GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def texts(response):
    return [i["details"]["text"] for i in response.json()["issue"]]


@pytest.mark.parametrize(
    ("path", "status", "code", "german", "english"),
    [
        ("/fhir/Medication", 404, "NOT_SUPPORTED", "Unbekannter oder nicht unterstützter Ressourcentyp 'Medication'.",
         "Unknown or unsupported resource type 'Medication'."),
        ("/fhir/Appointment?_count=abc", 400, "FIELDS_VALIDATION_ERROR",
         "Verwenden Sie eine ganze Zahl von 0 bis 200.", "Use a whole number from 0 to 200."),
        ("/fhir/Appointment?date=2026-11-25T10:00", 400, "FIELDS_VALIDATION_ERROR",
         "Eine Uhrzeit braucht ihren Zeitversatz (Z oder +hh:mm).", "A time needs its offset (Z or +hh:mm)."),
        ("/fhir/Appointment/999999", 404, "NOT_FOUND", "Termin nicht gefunden.", "Appointment not found."),
        ("/fhir/Slot?schedule=Schedule/1-1", 400, "FIELDS_VALIDATION_ERROR",
         "Geben Sie beide Enden an, z. B. start=ge2026-11-23&start=lt2026-11-30.",
         "Give both ends, e.g. start=ge2026-11-23&start=lt2026-11-30."),
    ],
)  # fmt: skip
async def test_an_error_is_written_in_the_requests_language(client, key, demo, path, status, code, german, english):
    in_german = await client.get(path, headers={**key.headers, **GERMAN})
    assert_outcome(in_german, status, code)
    assert texts(in_german) == [german] and in_german.headers["content-language"] == "de"
    in_english = await client.get(path, headers=key.headers)
    assert texts(in_english) == [english]


async def test_strict_refusals_and_lenient_warnings_are_german_too(client, key, demo):
    strict = await client.get(
        "/fhir/Appointment?colour=red&_sort=foo", headers={**key.headers, **GERMAN, "Prefer": "handling=strict"}
    )
    assert_outcome(strict, 400, "NOT_SUPPORTED")
    assert texts(strict) == [
        "Hier kein Suchparameter dieser Ressource.",
        "Nicht angeboten: foo. Angeboten: _id, _lastUpdated, date, status.",
    ]
    lenient = resource_of(await client.get("/fhir/Appointment?colour=red", headers={**key.headers, **GERMAN}))
    [warning] = entries(lenient, "outcome")[0]["issue"]
    assert warning["details"]["text"] == "Der Suchparameter 'colour' wird hier nicht unterstützt und wurde ignoriert."


async def test_refusals_of_the_body_and_the_caller_are_german(client, key, login, demo):
    headers = {**key.headers, **GERMAN, "Content-Type": FHIR_JSON}
    not_json = await client.post("/fhir/Appointment", content=b"[1, 2", headers=headers)
    assert_outcome(not_json, 400, "FIELDS_VALIDATION_ERROR")
    assert texts(not_json) == ["Der Inhalt ist kein gültiges JSON (oder zu tief verschachtelt)."]
    doctor = await login("doctor1")
    audit = await client.get("/fhir/AuditEvent", headers={**doctor.headers, **GERMAN})
    assert_outcome(audit, 403, "FORBIDDEN")
    assert texts(audit) == ["Nur Administratoren lesen das Protokoll."]
    xml = await client.get("/fhir/Appointment", headers={**key.headers, **GERMAN, "Accept": "application/fhir+xml"})
    assert_outcome(xml, 406, "NOT_SUPPORTED")
    assert texts(xml) == ["Akzeptieren Sie application/fhir+json."]
