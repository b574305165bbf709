"""A SMART token's scopes bound everything an answer carries: ``_include``/``_revinclude`` bring only the types
its scopes may read (narrowed to the launch's patient where only ``patient/`` scopes allow them), and an operation
that changes an existing resource (``$cancel``) needs ``u``, not ``c``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.smart.conftest import exchange

EVERY_INCLUDE = (
    "_include=Appointment:patient&_include=Appointment:practitioner&_include=Appointment:location"
    "&_revinclude=AppointmentResponse:appointment&_count=200"
)


async def _bearer(client: httpx.AsyncClient, app: Any, code: str) -> dict[str, str]:
    answer = await exchange(client, app, code)
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def _included(bundle: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in bundle.get("entry", []):
        if entry["search"]["mode"] == "include":
            resource = entry["resource"]
            out.setdefault(resource["resourceType"], set()).add(resource["id"])
    return out


def _patients_of(bundle: dict[str, Any]) -> set[str]:
    return {
        e["resource"]["participant"][0]["actor"]["reference"].split("/")[1]
        for e in bundle.get("entry", [])
        if e["search"]["mode"] == "match"
    }


async def test_include_brings_only_the_types_the_scopes_may_read(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    scope = "launch/patient patient/Appointment.rs"
    app = await register(scopes=scope.split())
    headers = await _bearer(client, app, await launch(app, scope))
    assert (await client.get("/fhir/Patient", headers=headers)).status_code == 403
    found = await client.get(f"/fhir/Appointment?{EVERY_INCLUDE}", headers=headers)
    assert found.status_code == 200, found.text
    assert _patients_of(found.json())  # the patient's own appointments are there
    assert _included(found.json()) == {}


async def test_include_brings_a_type_once_a_scope_allows_reading_it(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    scope = "launch/patient patient/Appointment.rs patient/Patient.r user/Practitioner.r"
    app = await register(scopes=scope.split())
    answer = await exchange(client, app, await launch(app, scope))
    token = answer.json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    found = (await client.get(f"/fhir/Appointment?{EVERY_INCLUDE}", headers=headers)).json()
    included = _included(found)
    assert set(included) == {"Patient", "Practitioner"}
    assert included["Patient"] == {token["patient"]}


async def test_a_staff_launch_includes_only_the_picked_patient_where_only_a_patient_scope_reads_patients(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], login: Callable[[str], Any]
) -> None:
    scope = "launch/patient user/Appointment.rs patient/Patient.r patient/AppointmentResponse.r"
    app = await register(scopes=scope.split())
    doctor = await login("doctor1")
    own = (await client.get("/fhir/Appointment?_count=200", headers=doctor.headers)).json()
    picked = sorted(_patients_of(own))[0]
    headers = await _bearer(client, app, await launch(app, scope, "doctor1", patient=picked))
    found = (await client.get(f"/fhir/Appointment?{EVERY_INCLUDE}", headers=headers)).json()
    assert len(_patients_of(found)) >= 2  # user/Appointment.rs: every patient of the doctor
    assert _included(found).get("Patient") == {picked}
    mine = {e["resource"]["id"] for e in found["entry"] if e["search"]["mode"] == "match"}
    picked_ones = {
        e["resource"]["id"]
        for e in found["entry"]
        if e["search"]["mode"] == "match" and e["resource"]["participant"][0]["actor"]["reference"].endswith(picked)
    }
    answered = {
        e["resource"]["appointment"]["reference"].split("/")[1]
        for e in found["entry"]
        if e["resource"]["resourceType"] == "AppointmentResponse"
    }
    assert answered <= picked_ones <= mine
    # The user token of the same doctor sees offers and answers of other patients' appointments too: the
    # narrowing above is the scope's doing.
    everyone = (await client.get(f"/fhir/Appointment?{EVERY_INCLUDE}", headers=doctor.headers)).json()
    all_answered = {
        e["resource"]["appointment"]["reference"].split("/")[1]
        for e in everyone["entry"]
        if e["resource"]["resourceType"] == "AppointmentResponse"
    }
    assert all_answered - picked_ones


async def test_a_cancel_needs_the_update_letter(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    body = {"resourceType": "Parameters", "parameter": [{"name": "by", "valueCode": "patient"}]}
    fhir_json = {"Content-Type": "application/fhir+json"}
    create_only = "launch/patient patient/Appointment.crs"
    app = await register(scopes=create_only.split())
    headers = await _bearer(client, app, await launch(app, create_only))
    seen = (await client.get("/fhir/Appointment", headers=headers)).json()
    first = seen["entry"][0]["resource"]["id"]
    refused = await client.post(f"/fhir/Appointment/{first}/$cancel", headers={**headers, **fhir_json}, json=body)
    assert refused.status_code == 403
    assert "scopes do not allow" in refused.json()["issue"][0]["details"]["text"]
    with_update = "launch/patient patient/Appointment.rus"
    app = await register(scopes=with_update.split(), name="Patient portal 2")
    headers = await _bearer(client, app, await launch(app, with_update))
    passed_scopes = await client.post(f"/fhir/Appointment/{first}/$cancel", headers={**headers, **fhir_json}, json=body)
    # Past the scopes, the cancel's own rule answers: through FHIR only the clinic's systems cancel.
    assert passed_scopes.status_code == 403
    assert "scopes do not allow" not in passed_scopes.json()["issue"][0]["details"]["text"]


async def test_finding_free_times_is_a_search_so_it_needs_s_not_r(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    find = "/fhir/Appointment/$find?start=2026-11-30&end=2026-11-30"
    searching = "launch/patient patient/Appointment.s"
    app = await register(scopes=searching.split())
    found = await client.get(find, headers=await _bearer(client, app, await launch(app, searching)))
    assert found.status_code == 200, found.text
    assert found.json()["resourceType"] == "Bundle"
    reading = "launch/patient patient/Appointment.r"
    other = await register(scopes=reading.split(), name="Reading app")
    refused = await client.get(find, headers=await _bearer(client, other, await launch(other, reading)))
    assert refused.status_code == 403, refused.text
