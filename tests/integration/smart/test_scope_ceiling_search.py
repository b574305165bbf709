"""A SMART token's scopes bound chained parameters and ``$everything`` as they bound ``_include``: a chain into a
type the scopes may not read matches nothing (it would tell what the app may not read), a chain into patients read
only through a ``patient/`` scope matches only the launch's patient, and ``$everything`` carries only the types the
scopes may read (docs/fhir.md#chained-parameters, docs/fhir.md#everything)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.smart.conftest import exchange
from tests.support.fhir import entries, resource_of


async def _token(client: httpx.AsyncClient, register: Any, launch: Any, scope: str, **options: str) -> dict[str, Any]:
    app = await register(scopes=scope.split(), name=f"App {scope}")
    answer = await exchange(client, app, await launch(app, scope, **options))
    assert answer.status_code == 200, answer.text
    token: dict[str, Any] = answer.json()
    token["headers"] = {"Authorization": f"Bearer {token['access_token']}"}
    return token


async def _ids(client: httpx.AsyncClient, headers: dict[str, str], query: str) -> set[str]:
    bundle = resource_of(await client.get(f"/fhir/Appointment?{query}&_count=200", headers=headers))
    return {r["id"] for r in entries(bundle)}


async def test_a_chain_into_a_type_the_scopes_may_not_read_matches_nothing(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    token = await _token(client, register, launch, "launch/patient patient/Appointment.rs")
    own = await _ids(client, token["headers"], f"patient={token['patient']}")
    assert own  # the patient's appointments are there ...
    assert await _ids(client, token["headers"], "patient.family=schmidt") == set()  # ... not through a chain
    assert await _ids(client, token["headers"], "practitioner.name=berger") == set()
    assert await _ids(client, token["headers"], "location.name=berlin") == set()
    allowed = await _token(
        client, register, launch, "launch/patient patient/Appointment.rs patient/Patient.r user/Practitioner.r"
    )
    assert await _ids(client, allowed["headers"], "patient.family=schmidt") == own
    assert await _ids(client, allowed["headers"], "practitioner.name=berger") <= own


async def test_a_chain_into_patients_read_through_a_patient_scope_matches_only_the_launch_patient(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], login: Callable[[str], Any]
) -> None:
    doctor = await login("doctor1")
    seen = resource_of(await client.get("/fhir/Appointment?_count=200", headers=doctor.headers))
    patients = sorted({r["participant"][0]["actor"]["reference"].split("/")[1] for r in entries(seen)})
    assert len(patients) >= 2
    picked, other = patients[0], patients[1]
    scope = "launch/patient user/Appointment.rs patient/Patient.r"
    token = await _token(client, register, launch, scope, user="doctor1", patient=picked)
    assert await _ids(client, token["headers"], f"patient.name:missing=false&patient._id={picked}")
    assert await _ids(client, token["headers"], f"patient._id={other}") == set()
    assert await _ids(client, token["headers"], f"patient={other}")  # the doctor's other patient, by reference


async def test_everything_carries_only_the_types_the_scopes_may_read(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    only_patient = await _token(client, register, launch, "launch/patient patient/Patient.r")
    url = f"/fhir/Patient/{only_patient['patient']}/$everything"
    bundle = resource_of(await client.get(url, headers=only_patient["headers"]))
    assert [e["resource"]["resourceType"] for e in bundle["entry"]] == ["Patient"]
    both = await _token(client, register, launch, "launch/patient patient/Patient.r patient/Appointment.rs")
    answered = resource_of(await client.get(url, headers=both["headers"]))
    kinds = {e["resource"]["resourceType"] for e in answered["entry"]}
    assert kinds == {"Patient", "Appointment"}  # not the doctors and places: no scope reads them
    no_patient = await _token(client, register, launch, "launch/patient patient/Appointment.rs")
    assert (await client.get(url, headers=no_patient["headers"])).status_code == 403
